package mcpserver_test

import (
	"context"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-memory/nexus/agents"
)

// openFDs counts this process's open file descriptors (-1 where the OS
// does not tell).
func openFDs() int {
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		if es, err := os.ReadDir(dir); err == nil {
			return len(es)
		}
	}
	return -1
}

// settle waits until the goroutine and descriptor counts drop to at most
// the baseline plus slack, and reports them.
func settle(t *testing.T, baseG, baseFD, slack int) {
	t.Helper()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	deadline := time.Now().Add(20 * time.Second)
	for {
		runtime.GC()
		g, fd := runtime.NumGoroutine(), openFDs()
		if g <= baseG+slack && fd <= baseFD+slack {
			t.Logf("goroutines %d (baseline %d), fds %d (baseline %d)", g, baseG, fd, baseFD)
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("leak: goroutines %d (baseline %d), fds %d (baseline %d)\n%s", g, baseG, fd, baseFD, buf[:n])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestNoLeaks: 1,000 sequential and 200 concurrent calls over HTTP leave
// no goroutines or file descriptors behind once the clients are gone.
func TestNoLeaks(t *testing.T) {
	v := mustVault(t, "lyra", "ella")
	mustWrite(t, v, "projects/p.md", "# P\nline\n")
	_, url, tokens := startServer(t, v, "lyra", "ella")
	// Warm up: the index keeper, log watcher and HTTP plumbing start once.
	warm, err := tryConnectHTTP(url, tokens["lyra"], "", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustOK(t, warm, "memory_search", map[string]any{"query": "line"})
	warm.Close()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	time.Sleep(100 * time.Millisecond)
	baseG, baseFD := runtime.NumGoroutine(), openFDs()

	for _, version := range []string{"", "2025-11-25"} {
		cs, err := tryConnectHTTP(url, tokens["lyra"], version, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 500; i++ {
			switch i % 5 {
			case 0:
				mustOK(t, cs, "memory_get", map[string]any{"path": "projects/p.md"})
			case 1:
				mustOK(t, cs, "fact_read", nil)
			case 2:
				mustOK(t, cs, "log_read", map[string]any{"last": 3})
			case 3:
				mustOK(t, cs, "decision_list", nil)
			case 4:
				mustFail(t, cs, "memory_get", map[string]any{"path": "../x.md"})
			}
		}
		cs.Close()
	}
	var sessions []*sdk.ClientSession
	for i := 0; i < 8; i++ {
		cs, err := tryConnectHTTP(url, tokens[[]string{"lyra", "ella"}[i%2]], "", nil)
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, cs)
	}
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs := sessions[i%len(sessions)]
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "log_append", Arguments: map[string]any{"summary": "concurrent call"}})
			if err != nil || res.IsError {
				t.Errorf("concurrent call %d: %v %v", i, err, texts(res))
			}
		}()
	}
	wg.Wait()
	for _, cs := range sessions {
		cs.Close()
	}
	settle(t, baseG, baseFD, 5)
}

// TestClientDisconnectMidCall: clients that give up while their writes
// are in flight leave every entry whole, and the server keeps serving.
func TestClientDisconnectMidCall(t *testing.T) {
	v := mustVault(t, "lyra")
	_, url, tokens := startServer(t, v, "lyra")
	cs := connectHTTP(t, url, tokens["lyra"], "", nil)
	// Of every eight calls, seven give up after 0 to 600 µs; the eighth
	// waits for its answer, so that writes land beside the abandoned ones.
	const calls = 40
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked []string // entries whose call answered that they were added
	)
	for i := 0; i < calls; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			if i%8 != 7 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(i%8)*100*time.Microsecond)
				defer cancel()
			}
			entry := "entry " + strings.Repeat("x", i)
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "memory", Arguments: map[string]any{"action": "add", "content": entry}})
			if i%8 == 7 && (err != nil || res.IsError) {
				t.Errorf("call %d, which waited for its answer: %v %v", i, err, texts(res))
			}
			if err == nil && !res.IsError {
				mu.Lock()
				acked = append(acked, entry)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// The server may still be carrying out abandoned calls: every entry
	// on disk must be whole whenever it is read, and every acknowledged
	// one there.
	mustOK(t, cs, "fact_read", nil)
	m, err := agents.OpenMemory(v, "lyra", agents.TargetMemory)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		n := len(strings.TrimPrefix(e, "entry "))
		if !strings.HasPrefix(e, "entry ") || strings.Trim(strings.TrimPrefix(e, "entry "), "x") != "" || n >= calls {
			t.Errorf("torn or foreign entry %q", e)
		}
	}
	if len(acked) < calls/8 {
		t.Fatalf("%d calls answered, want at least the %d that waited", len(acked), calls/8)
	}
	for _, e := range acked {
		if !slices.Contains(entries, e) {
			t.Errorf("acknowledged entry %q is not in MEMORY.md", e)
		}
	}
	t.Logf("%d of %d writes landed, %d of them acknowledged", len(entries), calls, len(acked))
	// A client that drops the connection entirely.
	dropped, err := tryConnectHTTP(url, tokens["lyra"], "2025-11-25", nil)
	if err != nil {
		t.Fatal(err)
	}
	go dropped.CallTool(context.Background(), &sdk.CallToolParams{Name: "log_append", Arguments: map[string]any{"summary": "dropping"}})
	dropped.Close()
	mustOK(t, cs, "memory", map[string]any{"action": "add", "content": "after the disconnects"})
}
