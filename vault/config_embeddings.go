package vault

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Embedding providers for search.embeddings.provider.
const (
	EmbedOpenAI = "openai" // any OpenAI-compatible /v1/embeddings endpoint
	EmbedStatic = "static" // a local model2vec-format folder, loaded in process
)

// Defaults of search.embeddings.
const (
	DefaultEmbedBatch   = 64
	DefaultEmbedTimeout = 30 * time.Second
	// DefaultQueryTimeout bounds the embedding of a search's query: past
	// it, the search answers by words alone (with a notice).
	DefaultQueryTimeout = 2 * time.Second
)

// EmbeddingsConfig is the search.embeddings: block of config.yaml: the
// embedding model search ranks by meaning with. The zero value means no
// model (words only). It is read as written; [EmbeddingsConfig.Validate]
// says what is wrong with it, so that a bad value costs the meaning
// ranking (with a notice), never the vault.
type EmbeddingsConfig struct {
	// Provider is "openai" or "static"; "" turns embeddings off.
	Provider string `yaml:"provider,omitempty"`
	// URL is the base URL of an OpenAI-compatible API, up to and
	// including /v1 (http://127.0.0.1:11434/v1 for Ollama); requests go
	// to URL + "/embeddings".
	URL string `yaml:"url,omitempty"`
	// Model is the model name the endpoint is asked for.
	Model string `yaml:"model,omitempty"`
	// APIKeyEnv names the environment variable that holds the API key
	// (sent as a bearer token). The key itself is never in the vault.
	APIKeyEnv string `yaml:"api_key_env,omitempty"`
	// APIKey is never used: it is read only so that Validate can refuse a
	// key written into the vault, where every synced machine would get it.
	APIKey string `yaml:"api_key,omitempty"`
	// Dimensions, when set, is asked of the endpoint ("dimensions") and
	// every vector must have it.
	Dimensions int `yaml:"dimensions,omitempty"`
	// BatchSize is how many texts go in one request (default 64).
	BatchSize int `yaml:"batch_size,omitempty"`
	// Timeout bounds each request, a Go duration or seconds (default 30s).
	Timeout string `yaml:"timeout,omitempty"`
	// Path is the model folder of provider static: absolute, "~/...", or
	// relative to the vault's root.
	Path string `yaml:"path,omitempty"`
	// QueryTimeout bounds how long a search waits for its query's
	// embedding before it answers by words alone (default 2s).
	QueryTimeout string `yaml:"query_timeout,omitempty"`
}

// Enabled reports whether a provider is set.
func (c EmbeddingsConfig) Enabled() bool { return strings.TrimSpace(c.Provider) != "" }

// Batch is batch_size or [DefaultEmbedBatch].
func (c EmbeddingsConfig) Batch() int { return orDefault(c.BatchSize, DefaultEmbedBatch) }

// RequestTimeout is timeout as a duration, or [DefaultEmbedTimeout] when it
// is unset or not a positive duration (Validate reports the latter).
func (c EmbeddingsConfig) RequestTimeout() time.Duration {
	d, err := ParseLockTimeout(c.Timeout) // same syntax: "30s" or seconds
	if err != nil || d <= 0 {
		return DefaultEmbedTimeout
	}
	return d
}

// QueryBudget is query_timeout as a duration, or [DefaultQueryTimeout]
// when it is unset or not a positive duration (Validate reports the
// latter).
func (c EmbeddingsConfig) QueryBudget() time.Duration {
	d, err := ParseLockTimeout(c.QueryTimeout)
	if err != nil || d <= 0 {
		return DefaultQueryTimeout
	}
	return d
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate returns nil for a usable search.embeddings block (or none), or
// an error naming the setting that is wrong and what it should be.
func (c EmbeddingsConfig) Validate() error {
	const at = "search.embeddings"
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("%s.%s: %s", at, key, fmt.Sprintf(format, args...))
	}
	if c.APIKey != "" {
		return bad("api_key", "an API key must not be written in the vault (it is synced to every machine); put it in an environment variable and name that variable in api_key_env")
	}
	if c.APIKeyEnv != "" && !envName.MatchString(c.APIKeyEnv) {
		return bad("api_key_env", "%q is not an environment variable name (letters, digits and _); it names the variable that holds the key, not the key", redactValue(c.APIKeyEnv))
	}
	if c.Dimensions < 0 || c.Dimensions > 65536 {
		return bad("dimensions", "%d is out of range; leave it out or set 1 to 65536", c.Dimensions)
	}
	if c.BatchSize < 0 || c.BatchSize > 4096 {
		return bad("batch_size", "%d is out of range; leave it out (64) or set 1 to 4096", c.BatchSize)
	}
	if c.Timeout != "" {
		if d, err := ParseLockTimeout(c.Timeout); err != nil || d <= 0 {
			return bad("timeout", "%q is not a positive duration; write one like 30s or 2m", c.Timeout)
		}
	}
	if c.QueryTimeout != "" {
		if d, err := ParseLockTimeout(c.QueryTimeout); err != nil || d <= 0 {
			return bad("query_timeout", "%q is not a positive duration; write one like 2s or 500ms", c.QueryTimeout)
		}
	}
	switch strings.TrimSpace(c.Provider) {
	case "":
		return nil
	case EmbedOpenAI:
		if c.URL == "" {
			return bad("url", "provider openai needs the endpoint's base URL, e.g. http://127.0.0.1:11434/v1 (Ollama)")
		}
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("url", "%q is not an http(s) URL; write the base URL, e.g. http://127.0.0.1:11434/v1", c.URL)
		}
		if strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/embeddings") {
			return bad("url", "%q names the embeddings endpoint itself; write the API's base URL, ending in /v1", c.URL)
		}
		if u.User != nil {
			return bad("url", "the URL holds a user or password; put the key in an environment variable named by api_key_env")
		}
		if strings.TrimSpace(c.Model) == "" {
			return bad("model", "provider openai needs the model name, e.g. nomic-embed-text")
		}
	case EmbedStatic:
		if strings.TrimSpace(c.Path) == "" {
			return bad("path", "provider static needs the model2vec model folder (model.safetensors, tokenizer.json, config.json)")
		}
	default:
		return bad("provider", "%q is not a provider; use openai (an OpenAI-compatible endpoint: Ollama, llama.cpp, a hosted API) or static (a local model2vec folder)", c.Provider)
	}
	return nil
}

// redactValue shows at most the first four characters of a value that may
// be a secret pasted into the wrong setting.
func redactValue(s string) string {
	if r := []rune(s); len(r) > 4 {
		return string(r[:4]) + "…"
	}
	return s
}
