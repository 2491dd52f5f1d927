package embed

import (
	"errors"
	"fmt"
	"strings"
)

// Kinds of provider failure. Every error a [Provider] returns wraps one of
// these, so callers can fall back to words-only search and say why.
var (
	// ErrNotConfigured is returned by [New] when search.embeddings sets no
	// provider.
	ErrNotConfigured = errors.New("no embedding model configured")
	// ErrConfig is wrapped by [New]'s error for a search.embeddings setting
	// that is wrong, or an API key variable that is unset.
	ErrConfig = errors.New("embedding configuration is not usable")
	// ErrUnreachable is returned when the endpoint could not be connected to
	// (down, wrong URL, refused).
	ErrUnreachable = errors.New("embedding endpoint unreachable")
	// ErrTimeout is returned when the endpoint did not answer within the
	// bound (the configured timeout or the caller's context).
	ErrTimeout = errors.New("embedding endpoint too slow")
	// ErrRateLimited is returned when the endpoint answered 429 (or 503 with
	// Retry-After) for longer than the bound allows waiting.
	ErrRateLimited = errors.New("embedding endpoint rate-limited")
	// ErrAuth is returned when the endpoint refused the key (401, 403).
	ErrAuth = errors.New("embedding endpoint refused the key")
	// ErrRejected is returned when the endpoint answered another HTTP error
	// (a wrong model name usually gives 404 or 400).
	ErrRejected = errors.New("embedding endpoint returned an error")
	// ErrMalformed is returned when the answer was not the JSON of an
	// embeddings response, or held the wrong number of vectors, or
	// non-finite numbers.
	ErrMalformed = errors.New("embedding endpoint answered malformed data")
	// ErrDimensions is returned when a vector's length differs from the
	// configured dimensions or from the other vectors of the model.
	ErrDimensions = errors.New("embedding has the wrong dimensions")
	// ErrNotModel is returned when a static model folder is not a usable
	// model2vec model.
	ErrNotModel = errors.New("not a model2vec model folder")
	// ErrOtherModel is returned when a query's model is not the one the
	// store's vectors are of; a [Store.Sync] with it re-embeds.
	ErrOtherModel = errors.New("vector store holds another model's vectors")
	// ErrWithheld is returned when a text was not sent to a remote endpoint
	// because the security scan refuses it (see [Outbound]).
	ErrWithheld = errors.New("text withheld from the embedding endpoint")
)

// Error is a provider failure: which provider, what kind (one of the Err
// values above, matched by errors.Is), and a detail safe to show (never
// an API key).
type Error struct {
	Provider string // "openai" or "static"
	Kind     error  // ErrUnreachable, ErrTimeout, ...
	Detail   string // one line
	Err      error  // the cause, if any
}

func (e *Error) Error() string {
	s := e.Provider + ": " + e.Kind.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the kind and the cause, so errors.Is matches either.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Notice is err as one line for a user whose search fell back to words
// only: "meaning search off: openai: embedding endpoint unreachable: ...".
// Newlines in err are folded, and the line is cut at 300 characters.
func Notice(err error) string {
	if err == nil {
		return ""
	}
	s := strings.Join(strings.Fields(err.Error()), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:299]) + "…"
	}
	if errors.Is(err, ErrNotConfigured) {
		return "words only: " + s + " (search.embeddings in .nexus/config.yaml)"
	}
	return "words only, meaning search unavailable: " + s
}

func errorf(provider string, kind error, cause error, format string, args ...any) *Error {
	return &Error{Provider: provider, Kind: kind, Detail: fmt.Sprintf(format, args...), Err: cause}
}
