package index

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/index/holder"
	"github.com/nexus-memory/nexus/vault"
)

// brokenHolder answers pings and breaks every other call: it drops the
// connection, or, with hang, waits until the caller goes away.
type brokenHolder struct {
	hang bool
	quit chan struct{} // closed when the test ends
	mu   sync.Mutex
	n    map[string]int // requests by path
}

func (b *brokenHolder) count(path string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n[path]
}

func (b *brokenHolder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.n[r.URL.Path]++
	b.mu.Unlock()
	if r.URL.Path == "/ping" {
		w.WriteHeader(http.StatusOK)
		json.NewEncoder(w).Encode(holder.Reply{Result: json.RawMessage("{}")})
		return
	}
	if b.hang {
		select {
		case <-r.Context().Done():
		case <-b.quit:
		}
		return
	}
	panic(http.ErrAbortHandler) // drop the connection, say nothing
}

// TestRetryOnce: a call that fails to reach the holder is made again at
// most once, and not at all when the caller gave up. A holder that answers
// the ping but fails every call (here: this process's index is held by
// ix, the broken holder stands in its serve.json) was asked again for
// ever, about every 10 s for a real one; a Ctrl-C made the caller try to
// take the index over.
func TestRetryOnce(t *testing.T) {
	ops := []struct {
		path string
		call func(ctx context.Context, ix *Index) error
	}{
		{"/search", func(ctx context.Context, ix *Index) error {
			_, err := ix.Search(ctx, Query{Text: "quince"})
			return err
		}},
		{"/sync", func(ctx context.Context, ix *Index) error { return ix.Sync(ctx) }},
		{"/status", func(ctx context.Context, ix *Index) error {
			_, err := ix.Status(ctx)
			return err
		}},
		{"/rebuild", func(ctx context.Context, ix *Index) error { return ix.Rebuild(ctx, nil) }},
	}
	// What the caller sees of the broken holder, and what must follow.
	kinds := []struct {
		name      string
		hang      bool // the holder waits; the caller gives up after 200 ms
		calls     int  // requests the holder receives
		takesOver bool // the caller tries to take the index over (a ping)
	}{
		{"dropped", false, 2, true},
		{"cancelled", true, 1, false},
	}
	for _, op := range ops {
		for _, k := range kinds {
			t.Run(strings.TrimPrefix(op.path, "/")+"/"+k.name, func(t *testing.T) {
				v := mustVault(t, map[string]string{"a.md": "quince"})
				held := mustOpen(t, v, Options{})
				b := &brokenHolder{hang: k.hang, quit: make(chan struct{}), n: map[string]int{}}
				srv := httptest.NewServer(b)
				defer srv.Close()
				defer close(b.quit)
				info, _ := json.Marshal(holder.Info{Addr: srv.Listener.Addr().String(), Token: "t", PID: 1, Version: holder.Version, KeepAliveMS: 50})
				if err := vault.WriteFile(filepath.Join(held.dir, serveFile), info, 0o600); err != nil {
					t.Fatal(err)
				}
				ix := mustOpen(t, v, Options{OpenTimeout: 50 * time.Millisecond})
				if !ix.Remote() {
					t.Fatal("the second opener holds the index")
				}
				pings := b.count("/ping")
				ctx := context.Background()
				if k.hang {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
					defer cancel()
				}
				err := op.call(ctx, ix)
				if !holder.IsConnError(err) {
					t.Fatalf("call to a broken holder: %v, want a connection error", err)
				}
				calls, tookOver := b.count(op.path), b.count("/ping") > pings
				if calls != k.calls || tookOver != k.takesOver {
					t.Fatalf("%d calls, takeover tried: %v; want %d calls, takeover tried: %v", calls, tookOver, k.calls, k.takesOver)
				}
			})
		}
	}
}
