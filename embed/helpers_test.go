package embed

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// hashVector is the fake model: each word (lower-cased, letters and
// digits) adds 1 to the component its FNV hash picks, so texts sharing
// words are near and texts sharing none are orthogonal (mostly).
func hashVector(text string, dims int) []float32 {
	v := make([]float32, dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%uint32(dims)]++
	}
	return v
}

func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return d / math.Sqrt(na*nb)
}

// fakeServer is an OpenAI-compatible /v1/embeddings endpoint on loopback
// answering with hashVector. intercept, if set, may answer a request
// itself (n counts requests from 1); it returns false to let the normal
// answer go.
type fakeServer struct {
	*httptest.Server
	dims int

	mu        sync.Mutex // protects the fields below
	requests  int
	inputs    [][]string
	auth      []string
	dimsAsked []int
	intercept func(n int, w http.ResponseWriter, r *http.Request) bool
}

func newFakeServer(t *testing.T, dims int) *fakeServer {
	t.Helper()
	f := &fakeServer{dims: dims}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model      string   `json:"model"`
			Input      []string `json:"input"`
			Dimensions int      `json:"dimensions"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.requests++
		n := f.requests
		f.inputs = append(f.inputs, req.Input)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.dimsAsked = append(f.dimsAsked, req.Dimensions)
		icpt := f.intercept
		f.mu.Unlock()
		if icpt != nil && icpt(n, w, r) {
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		resp := struct {
			Object string `json:"object"`
			Data   []item `json:"data"`
			Model  string `json:"model"`
			Usage  struct {
				PromptTokens int `json:"prompt_tokens"`
				TotalTokens  int `json:"total_tokens"`
			} `json:"usage"`
		}{Object: "list", Model: req.Model}
		// Answer in reverse order: clients must sort by index.
		for i := len(req.Input) - 1; i >= 0; i-- {
			resp.Data = append(resp.Data, item{"embedding", i, hashVector(req.Input[i], f.dims)})
			resp.Usage.PromptTokens += len(strings.Fields(req.Input[i]))
		}
		resp.Usage.TotalTokens = resp.Usage.PromptTokens
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) url() string { return f.URL + "/v1" }

func (f *fakeServer) setIntercept(fn func(n int, w http.ResponseWriter, r *http.Request) bool) {
	f.mu.Lock()
	f.intercept = fn
	f.mu.Unlock()
}

func (f *fakeServer) sent() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.inputs...)
}

func (f *fakeServer) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// hashProvider is a local Provider with the fake model, counting calls;
// fail, if set, may fail a call (n counts calls from 1).
type hashProvider struct {
	model  string
	dims   int
	remote bool

	mu    sync.Mutex // protects calls, texts, fail
	calls int
	texts []string
	fail  func(n int) error
}

func (h *hashProvider) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	h.mu.Lock()
	h.calls++
	n := h.calls
	fail := h.fail
	h.texts = append(h.texts, texts...)
	h.mu.Unlock()
	if fail != nil {
		if err := fail(n); err != nil {
			return nil, err
		}
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = hashVector(t, h.dims)
	}
	return out, nil
}

func (h *hashProvider) Model() string { return h.model }
func (h *hashProvider) Dims() int     { return h.dims }
func (h *hashProvider) Remote() bool  { return h.remote }

func (h *hashProvider) embedded() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.texts...)
}
