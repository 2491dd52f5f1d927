package index

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/index/holder"
	"github.com/nexus-memory/nexus/vault"
)

// TestStopHolderAsIndexHoldDoes: a holder opened with Yield that closes
// the index as soon as it is told to step down, as 'nexus index hold'
// does, is reported stopped every time. It used to close its connections
// before its answer was out, now and then, and 'index hold --stop' then
// failed with "unexpected EOF".
func TestStopHolderAsIndexHoldDoes(t *testing.T) {
	v := mustVault(t, map[string]string{"a.md": "lychee"})
	for i := range 10 {
		ix := mustOpen(t, v, Options{Yield: true})
		if ix.Remote() {
			t.Fatalf("run %d: another process holds the index", i)
		}
		closed := make(chan error, 1)
		go func() {
			<-ix.Yielded()
			closed <- ix.Close()
		}()
		pid, stopped, err := StopHolder(context.Background(), v, 5*time.Second)
		if err != nil || !stopped || pid <= 0 {
			t.Fatalf("run %d: StopHolder = %d, %v, %v; want this process, stopped", i, pid, stopped, err)
		}
		if err := <-closed; err != nil {
			t.Fatalf("run %d: close: %v", i, err)
		}
	}
}

// closingHolder stands in for a holder that steps down when asked: it
// drops the connection of the yield call without answering, as a holder
// of an older Nexus could when it exited at once, and then (exits) stops
// answering, or (!exits) goes on answering pings.
type closingHolder struct {
	srv   *httptest.Server
	exits bool
	mu    sync.Mutex
	asked bool // the yield call came
}

func (h *closingHolder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	asked := h.asked
	if r.URL.Path == "/yield" {
		h.asked = true
	}
	h.mu.Unlock()
	switch {
	case r.URL.Path == "/ping" && !(asked && h.exits):
		w.WriteHeader(http.StatusOK)
		json.NewEncoder(w).Encode(holder.Reply{Result: json.RawMessage("{}")})
	case r.URL.Path == "/yield" && h.exits:
		go h.srv.Close() // the process exits; Close waits for this handler
		panic(http.ErrAbortHandler)
	default:
		panic(http.ErrAbortHandler) // drop the connection, say nothing
	}
}

// TestStopHolderThatDropsTheConnection: a holder that steps down when
// asked and drops the connection of the yield call is stopped once it no
// longer answers; one that goes on answering was not stopped, and the
// broken call is the error.
func TestStopHolderThatDropsTheConnection(t *testing.T) {
	for _, tc := range []struct {
		name    string
		exits   bool
		stopped bool
	}{
		{"exits", true, true},
		{"stays", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := mustVault(t, nil)
			h := &closingHolder{exits: tc.exits}
			h.srv = httptest.NewServer(h)
			t.Cleanup(h.srv.Close)
			info, _ := json.Marshal(holder.Info{Addr: h.srv.Listener.Addr().String(), Token: "t", PID: 42, Version: holder.Version, Yields: true, KeepAliveMS: 50})
			if err := vault.WriteFile(filepath.Join(v.Root(), filepath.FromSlash(vault.IndexDir), serveFile), info, 0o600); err != nil {
				t.Fatal(err)
			}
			pid, stopped, err := StopHolder(context.Background(), v, time.Second)
			if pid != 42 || stopped != tc.stopped || (err != nil) == tc.stopped {
				t.Fatalf("StopHolder = %d, %v, %v; want 42, stopped %v", pid, stopped, err, tc.stopped)
			}
			if err != nil && !holder.IsConnError(err) {
				t.Fatalf("error %v, want the broken connection", err)
			}
		})
	}
}
