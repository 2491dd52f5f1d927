package embed

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestOpenAIEmbedBatches(t *testing.T) {
	srv := newFakeServer(t, 32)
	p, err := NewOpenAI(OpenAIOptions{URL: srv.url() + "/", Model: "fake-embed", APIKey: "test-key-123", BatchSize: 64, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if p.Dims() != 0 {
		t.Fatalf("Dims before any answer = %d, want 0 (unknown)", p.Dims())
	}
	texts := make([]string, 150)
	for i := range texts {
		texts[i] = fmt.Sprintf("note %d about topic%d", i, i%7)
	}
	vecs, err := p.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vecs), len(texts))
	}
	for i, v := range vecs {
		if c := cosine(v, hashVector(texts[i], 32)); c < 0.9999 {
			t.Fatalf("vector %d is not text %d's (cosine %.3f): order lost", i, i, c)
		}
	}
	var sizes []int
	for _, in := range srv.sent() {
		sizes = append(sizes, len(in))
	}
	if fmt.Sprint(sizes) != "[64 64 22]" {
		t.Fatalf("batches %v, want [64 64 22]", sizes)
	}
	if srv.auth[0] != "Bearer test-key-123" {
		t.Fatalf("Authorization %q", srv.auth[0])
	}
	if srv.dimsAsked[0] != 0 {
		t.Fatalf("dimensions %d asked though none configured", srv.dimsAsked[0])
	}
	if p.Dims() != 32 {
		t.Fatalf("Dims after an answer = %d, want 32", p.Dims())
	}
	if u := p.Usage(); u.Requests != 3 || u.Tokens == 0 {
		t.Fatalf("usage %+v, want 3 requests and the reported tokens", u)
	}
	if !strings.Contains(p.Model(), "fake-embed") {
		t.Fatalf("Model() = %q", p.Model())
	}
}

func TestOpenAIDimensionsAsked(t *testing.T) {
	srv := newFakeServer(t, 16)
	p, _ := NewOpenAI(OpenAIOptions{URL: srv.url(), Model: "m", Dimensions: 16})
	if _, err := p.Embed(context.Background(), []string{"a b"}); err != nil {
		t.Fatal(err)
	}
	if srv.dimsAsked[0] != 16 || srv.auth[0] != "" {
		t.Fatalf("dimensions asked %d, auth %q", srv.dimsAsked[0], srv.auth[0])
	}
	q, _ := NewOpenAI(OpenAIOptions{URL: srv.url(), Model: "m", Dimensions: 8})
	if p.Model() == q.Model() {
		t.Fatal("other dimensions give the same model identity")
	}
}

func TestOpenAIFailures(t *testing.T) {
	ok := func(n int, w http.ResponseWriter, r *http.Request) bool { return false }
	for _, tc := range []struct {
		name      string
		dims      int           // configured dimensions
		timeout   time.Duration // 0: 5s
		intercept func(n int, w http.ResponseWriter, r *http.Request) bool
		down      bool
		want      error
		wantIn    string // in the message
		requests  int    // requests the server should have seen (-1: do not check)
	}{
		{name: "down", down: true, want: ErrUnreachable, wantIn: "unreachable", requests: -1},
		{name: "slow", timeout: 100 * time.Millisecond, intercept: func(n int, w http.ResponseWriter, r *http.Request) bool {
			<-r.Context().Done() // answer only when the client gave up
			return true
		}, want: ErrTimeout, wantIn: "within 100ms", requests: 1},
		{name: "wrong dimensions", dims: 8, intercept: ok, want: ErrDimensions, wantIn: "32 dimensions, want 8", requests: 1},
		{name: "rate limited then fine", intercept: func(n int, w http.ResponseWriter, r *http.Request) bool {
			if n == 1 {
				w.Header().Set("Retry-After", "0")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return true
			}
			return false
		}, requests: 2},
		{name: "rate limited beyond the bound", intercept: func(n int, w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Retry-After", "3600")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return true
		}, want: ErrRateLimited, wantIn: "retry after 1h0m0s", requests: 1},
		{name: "rate limited every time", intercept: func(n int, w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return true
		}, want: ErrRateLimited, requests: maxRetries + 1},
		{name: "overloaded with retry-after", intercept: func(n int, w http.ResponseWriter, r *http.Request) bool {
			if n == 1 {
				w.Header().Set("Retry-After", "0")
				http.Error(w, "loading model", http.StatusServiceUnavailable)
				return true
			}
			return false
		}, requests: 2},
		{name: "malformed json", intercept: func(n int, w http.ResponseWriter, r *http.Request) bool {
			w.Write([]byte(`{"data": [{"embedding": [0.1, 0.2`))
			return true
		}, want: ErrMalformed, wantIn: "not an embeddings answer", requests: 1},
		{name: "html page", intercept: func(n int, w http.ResponseWriter, r *http.Request) bool {
			w.Write([]byte("<html><body>It works!</body></html>"))
			return true
		}, want: ErrMalformed, wantIn: "It works!", requests: 1},
		{name: "too few vectors", intercept: func(n int, w http.ResponseWriter, r *http.Request) bool {
			w.Write([]byte(`{"data": [{"index": 0, "embedding": [1, 2]}]}`))
			return true
		}, want: ErrMalformed, wantIn: "1 vectors for 2 texts", requests: 1},
		{name: "index twice", intercept: func(n int, w http.ResponseWriter, r *http.Request) bool {
			w.Write([]byte(`{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 0, "embedding": [1, 2]}]}`))
			return true
		}, want: ErrMalformed, wantIn: "out of order", requests: 1},
		{name: "vectors of two lengths", intercept: func(n int, w http.ResponseWriter, r *http.Request) bool {
			w.Write([]byte(`{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1, "embedding": [1, 2, 3]}]}`))
			return true
		}, want: ErrDimensions, requests: 1},
		{name: "key refused", intercept: func(n int, w http.ResponseWriter, r *http.Request) bool {
			http.Error(w, `{"error": "invalid api key"}`, http.StatusUnauthorized)
			return true
		}, want: ErrAuth, wantIn: "HTTP 401", requests: 1},
		{name: "model not found", intercept: func(n int, w http.ResponseWriter, r *http.Request) bool {
			http.Error(w, `{"error": "model \"nomic\" not found, try pulling it first"}`, http.StatusNotFound)
			return true
		}, want: ErrRejected, wantIn: "try pulling it first", requests: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeServer(t, 32)
			srv.setIntercept(tc.intercept)
			url := srv.url()
			if tc.down {
				srv.Close()
			}
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 5 * time.Second
			}
			p, err := NewOpenAI(OpenAIOptions{URL: url, Model: "m", APIKey: "secret-key-xyz", Dimensions: tc.dims, Timeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			vecs, err := p.Embed(context.Background(), []string{"first text", "second text"})
			if tc.want == nil {
				if err != nil || len(vecs) != 2 {
					t.Fatalf("Embed = %d vectors, %v; want success", len(vecs), err)
				}
			} else {
				if !errors.Is(err, tc.want) {
					t.Fatalf("Embed error %v, want %v", err, tc.want)
				}
				var e *Error
				if !errors.As(err, &e) || e.Provider != "openai" {
					t.Fatalf("error %T is not an *Error of openai", err)
				}
				if !strings.Contains(err.Error(), tc.wantIn) {
					t.Fatalf("error %q does not say %q", err, tc.wantIn)
				}
				n := Notice(err)
				if strings.Contains(n, "\n") || strings.Contains(n, "secret-key-xyz") || !strings.HasPrefix(n, "words only") {
					t.Fatalf("notice %q: want one line, no key", n)
				}
			}
			if tc.requests >= 0 && srv.count() != tc.requests {
				t.Fatalf("server saw %d requests, want %d", srv.count(), tc.requests)
			}
		})
	}
}

func TestOpenAICancelledContext(t *testing.T) {
	srv := newFakeServer(t, 8)
	p, _ := NewOpenAI(OpenAIOptions{URL: srv.url(), Model: "m"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Embed(ctx, []string{"x"}); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Embed with a cancelled context: %v, want ErrTimeout", err)
	}
}

func TestOpenAIWithholdsSecrets(t *testing.T) {
	srv := newFakeServer(t, 8)
	p, _ := NewOpenAI(OpenAIOptions{URL: srv.url(), Model: "m"})
	_, err := p.Embed(context.Background(), []string{"fine", "openai key sk-proj-abcdefghijklmnopqrstuvwxyz123456"})
	if !errors.Is(err, ErrWithheld) {
		t.Fatalf("Embed of a secret: %v, want ErrWithheld", err)
	}
	if srv.count() != 0 {
		t.Fatal("a batch holding a secret reached the endpoint")
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		h     string
		want  time.Duration
		given bool
	}{
		{"", 0, false},
		{"2", 2 * time.Second, true},
		{"0.5", 500 * time.Millisecond, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
	} {
		got, given := retryAfter(tc.h, now)
		if got != tc.want || given != tc.given {
			t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", tc.h, got, given, tc.want, tc.given)
		}
	}
}
