package embed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexus-memory/nexus/internal/scan"
	"github.com/nexus-memory/nexus/vault"
)

// Provider turns texts into vectors. Implementations are safe for
// concurrent use.
type Provider interface {
	// Embed returns one vector per text, in order, all of Dims() length.
	// It returns an [*Error] on failure; no partial result.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model is the model's identity: two providers with equal Model give
	// comparable vectors, and a change of Model means every stored vector
	// must be made again.
	Model() string
	// Dims is the length of the vectors, or 0 while it is not yet known
	// (an endpoint without configured dimensions, before its first answer).
	Dims() int
	// Remote reports whether Embed sends texts off this machine; then
	// callers pass them through [Outbound] first.
	Remote() bool
}

// Usage is what the last calls of a provider cost, for providers that
// know: tokens as the endpoint or tokenizer counted them, requests made.
type Usage struct {
	Tokens   int64
	Requests int64
}

// Meter is implemented by providers that count their [Usage].
type Meter interface {
	Usage() Usage
}

// New returns the provider that cfg (the search.embeddings block) asks
// for. root is the vault's root folder, against which a relative static
// path is read. It returns an error wrapping [ErrNotConfigured] when no
// provider is set, [ErrConfig] for a bad setting or an API key variable
// that is unset, and [ErrNotModel] for a static folder that is not a
// model.
func New(cfg vault.EmbeddingsConfig, root string) (Provider, error) {
	if !cfg.Enabled() {
		return nil, ErrNotConfigured
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	switch strings.TrimSpace(cfg.Provider) {
	case vault.EmbedOpenAI:
		key := ""
		if cfg.APIKeyEnv != "" {
			key = os.Getenv(cfg.APIKeyEnv)
			if key == "" {
				return nil, fmt.Errorf("%w: search.embeddings.api_key_env names %s, which is not set in this environment", ErrConfig, cfg.APIKeyEnv)
			}
		}
		return NewOpenAI(OpenAIOptions{
			URL:        cfg.URL,
			Model:      cfg.Model,
			APIKey:     key,
			Dimensions: cfg.Dimensions,
			BatchSize:  cfg.Batch(),
			Timeout:    cfg.RequestTimeout(),
		})
	case vault.EmbedStatic:
		return LoadStatic(ModelPath(cfg.Path, root))
	}
	return nil, fmt.Errorf("%w: search.embeddings.provider %q", ErrConfig, cfg.Provider)
}

// ModelPath resolves search.embeddings.path: "~/" is the home folder, a
// relative path is relative to the vault's root.
func ModelPath(path, root string) string {
	path = strings.TrimSpace(path)
	if rest, ok := strings.CutPrefix(path, "~/"); ok || path == "~" {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, filepath.FromSlash(rest))
		}
	}
	if filepath.IsAbs(path) || root == "" {
		return filepath.FromSlash(path)
	}
	return filepath.Join(root, filepath.FromSlash(path))
}

// MaxSendBytes bounds the text of one section sent to a remote endpoint;
// longer text is cut at a rune boundary (small local servers refuse
// inputs longer than their context, and the start of a section says most
// of what it is about).
const MaxSendBytes = 8192

// Outbound is the text of s that may be sent to a remote endpoint: s
// itself when the security scan lets it through; else s without the
// paragraphs (runs of lines between blank lines) the scan refuses — a
// secret, an exfiltration command, hidden characters — when what is left
// passes (redacted is then true); else ok is false and nothing of s may
// leave. A whole paragraph goes, not just the line that hit, because a
// secret can span lines of which only one looks like one (the body of a
// PEM key). Phrasing the scan only quarantines (instruction-like text) is
// not a secret and is sent. The result is cut to [MaxSendBytes].
func Outbound(s string) (out string, redacted, ok bool) {
	if refused(s) {
		var kept []string
		var para []string
		flush := func() {
			if p := strings.Join(para, "\n"); len(para) > 0 && !refused(p) {
				kept = append(kept, p)
			}
			para = para[:0]
		}
		for line := range strings.SplitSeq(s, "\n") {
			if strings.TrimSpace(line) == "" {
				flush()
				continue
			}
			para = append(para, line)
		}
		flush()
		s = strings.Join(kept, "\n\n")
		if strings.TrimSpace(s) == "" || refused(s) {
			return "", false, false
		}
		redacted = true
	}
	return cut(s, MaxSendBytes), redacted, true
}

func refused(s string) bool {
	var se *scan.Error
	if err := scan.Text(s); errors.As(err, &se) {
		return !se.Quarantinable()
	}
	return false
}

// cut is s cut to at most n bytes at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
