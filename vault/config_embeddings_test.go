package vault

import (
	"strings"
	"testing"
	"time"
)

func TestEmbeddingsConfig(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		wantErr    string // substring; "" means valid
	}{
		{"none", "memory_char_limit: 3000\n", ""},
		{"ollama", "search:\n  embeddings:\n    provider: openai\n    url: http://127.0.0.1:11434/v1\n    model: nomic-embed-text\n", ""},
		{"hosted", "search:\n  embeddings:\n    provider: openai\n    url: https://api.example.com/v1\n    model: m\n    api_key_env: EXAMPLE_KEY\n    dimensions: 256\n    batch_size: 32\n    timeout: 10s\n", ""},
		{"static", "search:\n  embeddings:\n    provider: static\n    path: ~/models/potion\n", ""},
		{"unknown provider", "search:\n  embeddings:\n    provider: ollama\n", "search.embeddings.provider: \"ollama\" is not a provider"},
		{"openai without url", "search:\n  embeddings:\n    provider: openai\n    model: m\n", "search.embeddings.url: provider openai needs"},
		{"url not http", "search:\n  embeddings:\n    provider: openai\n    url: 127.0.0.1:11434\n    model: m\n", "search.embeddings.url: \"127.0.0.1:11434\" is not an http(s) URL"},
		{"url of the endpoint", "search:\n  embeddings:\n    provider: openai\n    url: http://127.0.0.1:11434/v1/embeddings\n    model: m\n", "names the embeddings endpoint itself"},
		{"url with password", "search:\n  embeddings:\n    provider: openai\n    url: http://u:p@host/v1\n    model: m\n", "search.embeddings.url: the URL holds a user or password"},
		{"openai without model", "search:\n  embeddings:\n    provider: openai\n    url: http://h/v1\n", "search.embeddings.model: provider openai needs"},
		{"static without path", "search:\n  embeddings:\n    provider: static\n", "search.embeddings.path: provider static needs"},
		{"key in the vault", "search:\n  embeddings:\n    provider: openai\n    url: http://h/v1\n    model: m\n    api_key: sk-abcdef\n", "search.embeddings.api_key: an API key must not be written in the vault"},
		{"key in api_key_env", "search:\n  embeddings:\n    provider: openai\n    url: http://h/v1\n    model: m\n    api_key_env: sk-abcdefgh\n", `search.embeddings.api_key_env: "sk-a…" is not an environment variable name`},
		{"negative dimensions", "search:\n  embeddings:\n    provider: openai\n    url: http://h/v1\n    model: m\n    dimensions: -1\n", "search.embeddings.dimensions: -1 is out of range"},
		{"huge batch", "search:\n  embeddings:\n    provider: static\n    path: p\n    batch_size: 100000\n", "search.embeddings.batch_size: 100000 is out of range"},
		{"bad timeout", "search:\n  embeddings:\n    provider: static\n    path: p\n    timeout: soon\n", `search.embeddings.timeout: "soon" is not a positive duration`},
		{"bad query timeout", "search:\n  embeddings:\n    provider: static\n    path: p\n    query_timeout: -1s\n", `search.embeddings.query_timeout: "-1s" is not a positive duration`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseConfig([]byte(tc.yaml))
			if err != nil {
				t.Fatalf("parse: %v (a bad embeddings block must not stop the vault)", err)
			}
			err = cfg.Search.Embeddings.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Validate: %v, want %q", err, tc.wantErr)
			}
			if strings.Contains(tc.yaml, "sk-abcdef") && err != nil && strings.Contains(err.Error(), "sk-abcdef") {
				t.Fatalf("the error repeats the key: %v", err)
			}
			if keys, _ := UnknownConfigKeys([]byte(tc.yaml)); len(keys) > 0 {
				t.Fatalf("keys %v are unknown to the config", keys)
			}
		})
	}
}

func TestEmbeddingsConfigDefaults(t *testing.T) {
	var c EmbeddingsConfig
	if c.Enabled() || c.Batch() != DefaultEmbedBatch || c.RequestTimeout() != DefaultEmbedTimeout {
		t.Fatalf("zero config: enabled %v batch %d timeout %v", c.Enabled(), c.Batch(), c.RequestTimeout())
	}
	if c.QueryBudget() != DefaultQueryTimeout {
		t.Fatalf("zero config: query budget %v", c.QueryBudget())
	}
	c = EmbeddingsConfig{Provider: "static", BatchSize: 8, Timeout: "5", QueryTimeout: "500ms"}
	if !c.Enabled() || c.Batch() != 8 || c.RequestTimeout() != 5*time.Second || c.QueryBudget() != 500*time.Millisecond {
		t.Fatalf("set config: enabled %v batch %d timeout %v", c.Enabled(), c.Batch(), c.RequestTimeout())
	}
}
