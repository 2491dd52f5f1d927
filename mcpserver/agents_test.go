package mcpserver_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/mcpserver"
	"github.com/nexus-memory/nexus/vault"
)

// lastText is the last text content of a result: the unread notice, if any.
func lastText(res *sdk.CallToolResult) string {
	ts := texts(res)
	if len(ts) == 0 {
		return ""
	}
	return ts[len(ts)-1]
}

func TestTwoAgentsOverHTTP(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol="+version, func(t *testing.T) {
			v := mustVault(t, "lyra", "ella")
			_, url, tokens := startServer(t, v, "lyra", "ella")
			lyra := connectHTTP(t, url, tokens["lyra"], version, nil)
			ella := connectHTTP(t, url, tokens["ella"], version, nil)

			// Each writes its own memory; an agent argument is refused, naming who the caller is.
			mustFail(t, lyra, "memory", map[string]any{"action": "add", "content": "lyra's note", "agent": "ella"}, "is refused (it names", "you are lyra")
			if _, err := os.Stat(filepath.Join(v.Root(), "agents/lyra/MEMORY.md")); err == nil {
				if got := readFile(t, v, "agents/lyra/MEMORY.md"); got != "" {
					t.Errorf("refused call wrote lyra's MEMORY.md: %q", got)
				}
			}
			mustOK(t, lyra, "memory", map[string]any{"action": "add", "content": "lyra's note"})
			mustOK(t, ella, "memory", map[string]any{"action": "add", "content": "ella's note"})
			if got := readFile(t, v, "agents/lyra/MEMORY.md"); got != "lyra's note" && got != "lyra's note\n" {
				t.Errorf("lyra MEMORY.md: %q", got)
			}
			if got := readFile(t, v, "agents/ella/MEMORY.md"); strings.Contains(got, "lyra") {
				t.Errorf("lyra wrote ella's memory: %q", got)
			}
			// Removing through another agent's text fails: lyra's memory has no such entry.
			mustFail(t, lyra, "memory", map[string]any{"action": "remove", "old_text": "ella's note"}, "ella's note")
			if got := readFile(t, v, "agents/ella/MEMORY.md"); !strings.Contains(got, "ella's note") {
				t.Errorf("ella's entry gone: %q", got)
			}

			// ella appends; lyra's next result says so; log_read shows it once.
			mustOK(t, ella, "log_append", map[string]any{"summary": "deployed atlas"})
			mustOK(t, ella, "log_append", map[string]any{"summary": "rolled back atlas"})
			res := callTool(t, lyra, "fact_read", nil)
			if got := lastText(res); got != "2 new log entries from ella — call log_read" {
				t.Errorf("notice = %q", got)
			}
			r := mustOK(t, lyra, "log_read", nil)
			es, _ := r["entries"].([]any)
			if len(es) != 2 || es[0].(map[string]any)["summary"] != "deployed atlas" || es[0].(map[string]any)["agent"] != "ella" || r["acked"] != true {
				t.Fatalf("lyra log_read: %v", r)
			}
			if got := lastText(callTool(t, lyra, "fact_read", nil)); strings.Contains(got, "new log") {
				t.Errorf("notice after reading: %q", got)
			}
			r = mustOK(t, lyra, "log_read", nil)
			if r["count"] != float64(0) {
				t.Errorf("entries unread twice: %v", r)
			}
			// And the other way round, with a peek that does not ack.
			mustOK(t, lyra, "log_append", map[string]any{"summary": "reviewed the rollback"})
			if got := lastText(callTool(t, ella, "decision_list", nil)); got != "1 new log entry from lyra — call log_read" {
				t.Errorf("ella notice = %q", got)
			}
			r = mustOK(t, ella, "log_read", map[string]any{"ack": false})
			if r["count"] != float64(1) || r["acked"] != false {
				t.Errorf("peek: %v", r)
			}
			r = mustOK(t, ella, "log_read", nil)
			if r["count"] != float64(1) {
				t.Errorf("read after peek: %v", r)
			}
		})
	}
}

func TestHTTPAuth(t *testing.T) {
	v := mustVault(t, "lyra", "ella")
	_, url, tokens := startServer(t, v, "lyra", "ella")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(auth, sessionID, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		if sessionID != "" {
			req.Header.Set("Mcp-Session-Id", sessionID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for name, auth := range map[string]string{
		"missing":     "",
		"wrong":       "Bearer nxs_wrongwrongwrong",
		"hash":        "Bearer " + identity.HashToken(tokens["lyra"]),
		"basic":       "Basic " + tokens["lyra"],
		"empty":       "Bearer ",
		"huge":        "Bearer " + strings.Repeat("x", 100000),
		"with suffix": "Bearer " + tokens["lyra"] + "x",
	} {
		if resp := post(auth, "", init); resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s token: status %d, want 401 with WWW-Authenticate", name, resp.StatusCode)
		}
	}
	if _, err := tryConnectHTTP(url, "", "", nil); err == nil {
		t.Error("SDK client connected without a token")
	}
	if _, err := tryConnectHTTP(url, "nxs_bad", "2025-11-25", nil); err == nil {
		t.Error("SDK client connected with a bad token")
	}
	// A session opened by lyra is not usable with ella's token.
	resp := post("Bearer "+tokens["lyra"], "", init)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize as lyra: %d, session %q", resp.StatusCode, sid)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	if resp := post("Bearer "+tokens["lyra"], sid, list); resp.StatusCode != http.StatusOK {
		t.Errorf("lyra in her own session: %d", resp.StatusCode)
	}
	if resp := post("Bearer "+tokens["ella"], sid, list); resp.StatusCode != http.StatusNotFound {
		t.Errorf("ella in lyra's session: %d, want 404", resp.StatusCode)
	}
	// A rotated token stops working at once.
	if _, err := identity.NewToken(v, "lyra", true); err != nil {
		t.Fatal(err)
	}
	if resp := post("Bearer "+tokens["lyra"], "", init); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("old token after rotation: %d", resp.StatusCode)
	}
	// Oversized bodies are refused before they are read.
	big := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory","arguments":{"content":"` + strings.Repeat("a", 10<<20) + `"}}}`
	if resp := post("Bearer "+tokens["ella"], "", big); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("10 MB body: %d, want 413", resp.StatusCode)
	}
	// The same through the SDK: refused, nothing written, and the server
	// serves the next client.
	cs, err := tryConnectHTTP(url, tokens["ella"], "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "memory", Arguments: map[string]any{"action": "add", "content": strings.Repeat("a", 10<<20)}}); err == nil && !res.IsError {
		t.Error("10 MB call accepted")
	}
	cs.Close()
	if _, err := os.Stat(filepath.Join(v.Root(), "agents/ella/MEMORY.md")); !os.IsNotExist(err) {
		t.Errorf("10 MB call wrote MEMORY.md: %v", err)
	}
	again := connectHTTP(t, url, tokens["ella"], "", nil)
	mustOK(t, again, "memory", map[string]any{"action": "add", "content": "after the big one"})
}

func TestListenAddressPolicy(t *testing.T) {
	for _, tt := range []struct {
		addr          string
		tls, insecure bool
		ok            bool
	}{
		{"127.0.0.1:7777", false, false, true},
		{"localhost:7777", false, false, true},
		{"[::1]:7777", false, false, true},
		{"0.0.0.0:7777", false, false, false},
		{":7777", false, false, false},
		{"192.168.1.5:7777", false, false, false},
		{"example.com:7777", false, false, false},
		{"0.0.0.0:7777", true, false, true},
		{"0.0.0.0:7777", false, true, true},
		{"nonsense", false, false, false},
	} {
		err := mcpserver.CheckListenAddr(tt.addr, tt.tls, tt.insecure)
		if (err == nil) != tt.ok {
			t.Errorf("CheckListenAddr(%q, tls=%v, insecure=%v) = %v, want ok=%v", tt.addr, tt.tls, tt.insecure, err, tt.ok)
		}
	}
}

// TestLiveLogSubscription: a subscriber to the live log is told when
// another agent (here another process) appends.
func TestLiveLogSubscription(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol="+version, func(t *testing.T) {
			v := mustVault(t, "lyra", "ella")
			_, url, tokens := startServer(t, v, "lyra", "ella")
			var mu sync.Mutex
			updated := make(chan string, 16)
			opts := &sdk.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
				mu.Lock()
				defer mu.Unlock()
				select {
				case updated <- req.Params.URI:
				default:
				}
			}}
			lyra := connectHTTP(t, url, tokens["lyra"], version, opts)
			if err := lyra.Subscribe(context.Background(), &sdk.SubscribeParams{URI: mcpserver.LiveLogURI}); err != nil {
				t.Fatal(err)
			}
			// Appends by another process: the CLI.
			for i := 0; ; i++ {
				out, err := exec.Command(nexusBin, "--vault", v.Root(), "--agent", "ella", "log", "append", "ping from ella").CombinedOutput()
				if err != nil {
					t.Fatalf("nexus log append: %v\n%s", err, out)
				}
				select {
				case uri := <-updated:
					if uri != mcpserver.LiveLogURI {
						t.Errorf("updated %q", uri)
					}
					return
				case <-time.After(2 * time.Second):
					// The listen stream may not have been established when
					// the first append landed; append again.
					if i == 10 {
						t.Fatal("no notifications/resources/updated after 10 appends")
					}
				}
			}
		})
	}
}

func TestSessionStartEqualsNexusPrompt(t *testing.T) {
	v := mustVault(t, "lyra", "ella")
	cs := connectStdio(t, v, "lyra", nil)
	mustOK(t, cs, "memory", map[string]any{"action": "add", "content": "Prefers tabs."})
	mustOK(t, cs, "fact_write", map[string]any{"name": "Editor", "description": "which editor", "type": "user", "body": "Helix"})
	mustOK(t, cs, "checkpoint_save", map[string]any{"task": "Port the parser"})
	mustOK(t, cs, "decision_record", map[string]any{"title": "Tabs", "decision": "Use tabs."})
	if out, err := exec.Command(nexusBin, "--vault", v.Root(), "--agent", "ella", "log", "append", "hello lyra").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	p, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: "session_start"})
	if err != nil {
		t.Fatal(err)
	}
	got := p.Messages[0].Content.(*sdk.TextContent).Text
	cmd := exec.Command(nexusBin, "--vault", v.Root(), "--agent", "lyra", "prompt")
	var want bytes.Buffer
	cmd.Stdout = &want
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if got != want.String() {
		t.Errorf("session_start differs from 'nexus prompt':\n--- prompt\n%s\n--- nexus prompt\n%s", got, want.String())
	}
	for _, w := range []string{"Prefers tabs.", "Editor", "Port the parser", "Use tabs.", "hello lyra"} {
		if !strings.Contains(got, w) {
			t.Errorf("session_start lacks %q", w)
		}
	}
	// A new session takes a new snapshot, with what was written meanwhile.
	mustOK(t, cs, "memory", map[string]any{"action": "add", "content": "Later note."})
	same, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: "session_start"})
	if err != nil {
		t.Fatal(err)
	}
	if text := same.Messages[0].Content.(*sdk.TextContent).Text; text != got {
		t.Errorf("session_start changed within the stdio session:\n%s", text)
	}
	fresh := connectStdio(t, v, "lyra", nil)
	p2, err := fresh.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: "session_start"})
	if err != nil {
		t.Fatal(err)
	}
	if text := p2.Messages[0].Content.(*sdk.TextContent).Text; !strings.Contains(text, "Later note.") {
		t.Errorf("a new session's snapshot lacks a write made before it:\n%s", text)
	}
}

// TestNoticeSeesOtherProcesses: an append by another process (the CLI)
// shows in the notice once the server's log watcher sees it.
func TestNoticeSeesOtherProcesses(t *testing.T) {
	v := mustVault(t, "lyra", "ella")
	_, url, tokens := startServer(t, v, "lyra")
	cs := connectHTTP(t, url, tokens["lyra"], "", nil)
	if got := lastText(callTool(t, cs, "fact_read", nil)); strings.Contains(got, "new log") {
		t.Fatalf("notice before any entry: %q", got)
	}
	if out, err := execNexus(v.Root(), "--agent", "ella", "log", "append", "from another process"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got := lastText(callTool(t, cs, "fact_read", nil))
		if got == "1 new log entry from ella — call log_read" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("notice never came: %q", got)
		}
	}
}

// TestConfigEditsApplyWithoutRestart: a person lowers the memory limit and
// turns on the review gate while the server runs; the next calls obey.
func TestConfigEditsApplyWithoutRestart(t *testing.T) {
	v := mustVault(t, "lyra")
	_, url, tokens := startServer(t, v, "lyra")
	cs := connectHTTP(t, url, tokens["lyra"], "", nil)
	mustOK(t, cs, "memory", map[string]any{"action": "add", "content": strings.Repeat("a", 150)})
	if err := v.UpdateConfig(func(c *vault.Config) error { c.MemoryCharLimit = 200; return nil }); err != nil {
		t.Fatal(err)
	}
	mustFail(t, cs, "memory", map[string]any{"action": "add", "content": strings.Repeat("b", 100)}, "200")
	if err := v.UpdateConfig(func(c *vault.Config) error { c.MemoryCharLimit = 2200; c.Review.WriteApproval = true; return nil }); err != nil {
		t.Fatal(err)
	}
	r := mustOK(t, cs, "memory", map[string]any{"action": "add", "content": "needs a person's approval"})
	if r["staged"] != true || r["pending_id"] == nil {
		t.Fatalf("write under the review gate: %v", r)
	}
	if got := readFile(t, v, "agents/lyra/MEMORY.md"); strings.Contains(got, "approval") {
		t.Errorf("gated write landed: %q", got)
	}
	if got := readFile(t, v, "review/pending/"+r["pending_id"].(string)+".md"); !strings.Contains(got, "needs a person's approval") {
		t.Errorf("pending item: %q", got)
	}
}

// TestServerCarriesOutObsidianApprovals: a person sets status: approved on
// a pending item in Obsidian while the server runs; the server's keeper
// turns it into a fact file, which the agent then reads.
func TestServerCarriesOutObsidianApprovals(t *testing.T) {
	v := mustVault(t, "lyra")
	srv, err := mcpserver.New(mcpserver.Options{Vault: v, KeeperEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	defer srv.Close(context.Background())
	token, err := identity.NewToken(v, "lyra", false)
	if err != nil {
		t.Fatal(err)
	}
	cs := connectHTTP(t, hs.URL+mcpserver.EndpointPath, token, "", nil)
	it := mustOK(t, cs, "retain", map[string]any{"name": "Tea", "description": "what the user drinks", "type": "user", "body": "Green tea, no sugar."})
	path := filepath.Join(v.Root(), filepath.FromSlash(it["path"].(string)))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited, err := vault.SetProperty(data, "status", "approved")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edited, 0o644); err != nil { // as Obsidian saves
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		res := callTool(t, cs, "fact_read", map[string]any{"slug": "tea"})
		if !res.IsError {
			if !strings.Contains(texts(res)[0], "Green tea") {
				t.Fatalf("approved fact: %v", texts(res))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the approval set in Obsidian was never carried out: %v", texts(res))
		}
	}
}
