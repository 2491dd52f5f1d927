package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"

	"sync/atomic"
	"time"
)

// OpenAIOptions configure [NewOpenAI].
type OpenAIOptions struct {
	// URL is the API's base URL including /v1; requests go to
	// URL + "/embeddings".
	URL   string
	Model string
	// APIKey, if set, is sent as "Authorization: Bearer KEY".
	APIKey string
	// Dimensions, if set, is asked for and checked on every vector.
	Dimensions int
	// BatchSize is the most texts in one request (default 64).
	BatchSize int
	// Timeout bounds each request, waits for a rate limit included
	// (default 30s).
	Timeout time.Duration
	// Client is the HTTP client (default: one with no timeout of its
	// own; Timeout and the context bound each request).
	Client *http.Client
}

// OpenAI is a [Provider] for an OpenAI-compatible embeddings endpoint.
type OpenAI struct {
	opts     OpenAIOptions
	endpoint string
	dims     atomic.Int64 // learnt from the first answer when not configured
	tokens   atomic.Int64
	requests atomic.Int64
}

// maxRetries is how often one request is retried after a 429 (or a 503
// with Retry-After), each time only when the wait fits the bound.
const maxRetries = 4

// maxResponse bounds the body read from the endpoint.
const maxResponse = 256 << 20

// NewOpenAI returns a provider for the endpoint in o. It makes no request.
func NewOpenAI(o OpenAIOptions) (*OpenAI, error) {
	if o.URL == "" || o.Model == "" {
		return nil, fmt.Errorf("%w: openai provider needs a URL and a model", ErrConfig)
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 64
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	p := &OpenAI{opts: o, endpoint: strings.TrimRight(o.URL, "/") + "/embeddings"}
	p.dims.Store(int64(o.Dimensions))
	return p, nil
}

// Model is "openai MODEL@URL" plus "/dims=N" when dimensions are
// configured (a model asked for other dimensions gives other vectors).
func (p *OpenAI) Model() string {
	id := "openai " + p.opts.Model + "@" + strings.TrimRight(p.opts.URL, "/")
	if p.opts.Dimensions > 0 {
		id += "/dims=" + strconv.Itoa(p.opts.Dimensions)
	}
	return id
}

// Dims is the configured dimensions, or those of the first answer.
func (p *OpenAI) Dims() int { return int(p.dims.Load()) }

// Remote is true: texts leave the machine.
func (p *OpenAI) Remote() bool { return true }

// Usage is the tokens the endpoint reported and the requests made so far.
func (p *OpenAI) Usage() Usage {
	return Usage{Tokens: p.tokens.Load(), Requests: p.requests.Load()}
}

// Embed sends texts in batches of BatchSize, one request at a time. Each
// request is bounded by Timeout and ctx; a 429 is retried after its
// Retry-After (1s when it gives none) while the wait fits that bound.
// Texts are sent as given: callers pass remote-bound text through
// [Outbound] ([Store.Sync] and [Store.Query] do), and Embed refuses a
// batch holding text Outbound would not send whole, as a last guard.
// Texts longer than [MaxSendBytes] are cut.
func (p *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	send := make([]string, len(texts))
	for i, t := range texts {
		out, redacted, ok := Outbound(t)
		if !ok || redacted {
			return nil, errorf("openai", ErrWithheld, nil, "text %d holds what the security scan refuses", i)
		}
		send[i] = out
	}
	texts = send
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += p.opts.BatchSize {
		batch := texts[start:min(start+p.opts.BatchSize, len(texts))]
		vecs, err := p.request(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

type embedRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	Dimensions     int      `json:"dimensions,omitempty"`
	EncodingFormat string   `json:"encoding_format"`
}

type embedResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int64 `json:"prompt_tokens"`
		TotalTokens  int64 `json:"total_tokens"`
	} `json:"usage"`
}

// request makes one request for batch, retrying rate limits within the
// bound.
func (p *OpenAI) request(ctx context.Context, batch []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	body, err := json.Marshal(embedRequest{Model: p.opts.Model, Input: batch, Dimensions: p.opts.Dimensions, EncodingFormat: "float"})
	if err != nil {
		return nil, fmt.Errorf("encode embeddings request: %w", err)
	}
	for attempt := 0; ; attempt++ {
		status, header, data, err := p.post(ctx, body)
		if err != nil {
			return nil, err
		}
		switch {
		case status == http.StatusOK:
			return p.decode(data, len(batch))
		case status == http.StatusTooManyRequests || (status == http.StatusServiceUnavailable && header.Get("Retry-After") != ""):
			wait, given := retryAfter(header.Get("Retry-After"), time.Now())
			if !given {
				wait = time.Second
			}
			deadline, _ := ctx.Deadline()
			if attempt >= maxRetries || time.Until(deadline) < wait {
				return nil, errorf("openai", ErrRateLimited, nil, "HTTP %d, retry after %s, beyond the %s bound", status, wait.Round(time.Millisecond), p.opts.Timeout)
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, p.ctxError(ctx, ctx.Err())
			case <-t.C:
			}
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			return nil, errorf("openai", ErrAuth, nil, "HTTP %d from %s%s", status, p.endpoint, bodyHint(data))
		default:
			hint := ""
			if status == http.StatusNotFound {
				hint = " (is the URL the API base, ending in /v1, and the model pulled?)"
			}
			return nil, errorf("openai", ErrRejected, nil, "HTTP %d from %s%s%s", status, p.endpoint, hint, bodyHint(data))
		}
	}
}

// post sends one request; transport failures come back as an [*Error].
func (p *OpenAI) post(ctx context.Context, body []byte) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, errorf("openai", ErrUnreachable, err, "bad URL")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if p.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.opts.APIKey)
	}
	p.requests.Add(1)
	resp, err := p.opts.Client.Do(req)
	if err != nil {
		return 0, nil, nil, p.ctxError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return 0, nil, nil, p.ctxError(ctx, err)
	}
	if len(data) > maxResponse {
		return 0, nil, nil, errorf("openai", ErrMalformed, nil, "answer larger than %d MiB", maxResponse>>20)
	}
	return resp.StatusCode, resp.Header, data, nil
}

// ctxError classifies a transport error: the bound ran out, or the
// endpoint could not be reached.
func (p *OpenAI) ctxError(ctx context.Context, err error) error {
	var ne net.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return errorf("openai", ErrTimeout, nil, "no answer from %s within %s", p.endpoint, p.opts.Timeout)
	case errors.Is(err, context.Canceled):
		return errorf("openai", ErrTimeout, context.Canceled, "request to %s cancelled", p.endpoint)
	}
	return errorf("openai", ErrUnreachable, unwrapURLError(err), "%s", p.endpoint)
}

// unwrapURLError drops *url.Error's repetition of the method and URL.
func unwrapURLError(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && strings.HasPrefix(err.Error(), "Post ") {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

// decode checks and converts a 200 answer for n texts.
func (p *OpenAI) decode(data []byte, n int) ([][]float32, error) {
	var r embedResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, errorf("openai", ErrMalformed, nil, "not an embeddings answer (%v)%s", err, bodyHint(data))
	}
	if len(r.Data) != n {
		return nil, errorf("openai", ErrMalformed, nil, "%d vectors for %d texts", len(r.Data), n)
	}
	out := make([][]float32, n)
	want := p.Dims()
	for i, d := range r.Data {
		idx := i
		if d.Index != nil {
			idx = *d.Index
		}
		if idx < 0 || idx >= n || out[idx] != nil {
			return nil, errorf("openai", ErrMalformed, nil, "vector index %d out of order", idx)
		}
		if len(d.Embedding) == 0 {
			return nil, errorf("openai", ErrMalformed, nil, "empty vector %d", idx)
		}
		if want == 0 {
			want = len(d.Embedding)
		}
		if len(d.Embedding) != want {
			return nil, errorf("openai", ErrDimensions, nil, "vector of %d dimensions, want %d", len(d.Embedding), want)
		}
		v := make([]float32, len(d.Embedding))
		for j, x := range d.Embedding {
			if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > math.MaxFloat32 {
				return nil, errorf("openai", ErrMalformed, nil, "vector %d holds a non-finite number", idx)
			}
			v[j] = float32(x)
		}
		out[idx] = v
	}
	if p.opts.Dimensions == 0 {
		p.dims.CompareAndSwap(0, int64(want))
	}
	tokens := r.Usage.PromptTokens
	if tokens == 0 {
		tokens = r.Usage.TotalTokens
	}
	p.tokens.Add(tokens)
	return out, nil
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(h, 64); err == nil && s >= 0 && s < 1e6 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// bodyHint is the start of an error body, on one line, for the message.
func bodyHint(data []byte) string {
	s := strings.Join(strings.Fields(string(data)), " ")
	if s == "" {
		return ""
	}
	return ": " + cut(s, 160)
}

var _ Provider = (*OpenAI)(nil)
var _ Meter = (*OpenAI)(nil)
