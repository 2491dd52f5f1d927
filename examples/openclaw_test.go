//go:build openclaw

package examples

// TestOpenClawPlugin runs the Nexus plugin (examples/openclaw/plugin) inside
// a real OpenClaw from npm, against a scripted OpenAI-compatible model
// server on 127.0.0.1 whose replies make no tool call at all: the shared
// log must reach the model and the turn must land in the vault through the
// plugin's hooks alone.
//
// It needs OpenClaw and Node 24 installed outside the repository; .ci/run
// does that (npm, cached) and sets:
//
//	OPENCLAW_BIN   path of the openclaw executable (node_modules/.bin/openclaw)
//	NODE24_DIR     folder holding Node 24's node binary (OpenClaw needs >= 24.16)
//
// Run: go test -tags openclaw -run OpenClaw -v ./examples

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// scriptedModel is a fake OpenAI-compatible chat-completions server: it
// records every request and answers with a fixed text, never a tool call.
type scriptedModel struct {
	mu       sync.Mutex
	requests []string // raw bodies of chat-completion requests
	reply    string
}

func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"scripted","object":"model"}]}`)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Stream bool `json:"stream"`
	}
	json.Unmarshal(body, &req)
	m.mu.Lock()
	m.requests = append(m.requests, string(body))
	reply := m.reply
	m.mu.Unlock()
	text, _ := json.Marshal(reply)
	created := time.Now().Unix()
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":%d,"model":"scripted","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}`, created, text)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":%d,\"model\":\"scripted\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%s},\"finish_reason\":null}]}\n\n", created, text)
	fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":%d,\"model\":\"scripted\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":10,\"total_tokens\":20}}\n\n", created)
	io.WriteString(w, "data: [DONE]\n\n")
}

// since returns the requests recorded after the first n.
func (m *scriptedModel) since(n int) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.requests[n:]...)
}

func (m *scriptedModel) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

// openclawEnv finds the installed OpenClaw and Node 24, or fails.
func openclawEnv(t *testing.T) (bin string, env []string) {
	t.Helper()
	bin, nodeDir := os.Getenv("OPENCLAW_BIN"), os.Getenv("NODE24_DIR")
	if bin == "" || nodeDir == "" {
		t.Fatal("OPENCLAW_BIN and NODE24_DIR must name an installed OpenClaw and Node 24 (.ci/run installs both)")
	}
	return bin, append(os.Environ(), "PATH="+nodeDir+string(os.PathListSeparator)+os.Getenv("PATH"), "NEXUS_SEARCH_HOLD=0")
}

// writeOpenClawConfig writes home/.openclaw/openclaw.json: the scripted
// model as the default, and the Nexus plugin loaded from the repository with
// the given plugin config.
func writeOpenClawConfig(t *testing.T, home, modelURL string, nexusConfig map[string]any) {
	t.Helper()
	plugin, err := filepath.Abs("openclaw/plugin")
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{
		"models": map[string]any{
			"mode": "merge",
			"providers": map[string]any{
				"scripted": map[string]any{
					"baseUrl": modelURL + "/v1",
					"apiKey":  "scripted",
					"api":     "openai-completions",
					"models": []any{map[string]any{
						"id": "scripted", "name": "Scripted", "reasoning": false, "input": []string{"text"},
						"cost":          map[string]int{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
						"contextWindow": 128000, "maxTokens": 4096,
					}},
				},
			},
		},
		"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "scripted/scripted"}}},
		"plugins": map[string]any{
			"allow": []string{"nexus"},
			"load":  map[string]any{"paths": []string{plugin}},
			"entries": map[string]any{"nexus": map[string]any{
				"enabled": true,
				"hooks":   map[string]any{"allowConversationAccess": true},
				"config":  nexusConfig,
			}},
		},
	}
	data, _ := json.MarshalIndent(cfg, "", "  ")
	dir := filepath.Join(home, ".openclaw")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "openclaw.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// runOpenClaw runs one local agent turn and returns its output.
func runOpenClaw(t *testing.T, bin string, env []string, home, message string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "agent", "--local", "--message", message)
	cmd.Env = append(env, "OPENCLAW_HOME="+home)
	cmd.Dir = home
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("openclaw agent --local %q: %s", message, time.Since(start).Round(time.Second))
	if err != nil {
		t.Fatalf("openclaw agent --local: %v\n%s", err, out)
	}
	return string(out)
}

// logEntries returns the live-log entries written by who.
func logEntries(t *testing.T, bin, vault, who string) []map[string]any {
	t.Helper()
	var res struct {
		Entries []map[string]any `json:"entries"`
	}
	out := nexus(t, bin, "--vault", vault, "--json", "log", "read", "--last", "0", "--from", who)
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("log read: %v\n%s", err, out)
	}
	return res.Entries
}

func TestOpenClawPlugin(t *testing.T) {
	ocBin, env := openclawEnv(t)
	bin := buildNexus(t)
	vault := newVault(t, bin)
	nexus(t, bin, "--vault", vault, "--agent", "lyra", "log", "append", "--channel", "deploy", "--kind", "shipped", "LYRA-1 fixed the login timeout on the API gateway")

	model := &scriptedModel{reply: "The deploy pipeline is green and the gateway fix is live."}
	srv := httptest.NewServer(model) // 127.0.0.1, a free port
	defer srv.Close()
	home := t.TempDir()
	writeOpenClawConfig(t, home, srv.URL, map[string]any{"vault": vault, "agent": "ella", "bin": bin, "timeoutMs": 20000})

	// Turn 1: lyra's unread entry reaches the model; the turn lands as
	// one entry signed by ella.
	runOpenClaw(t, ocBin, env, home, "What changed overnight on staging?")
	reqs := model.since(0)
	if len(reqs) == 0 {
		t.Fatal("the model was never called")
	}
	if !anyContains(reqs, "LYRA-1 fixed the login timeout") {
		t.Errorf("no model request carried lyra's unread entry; first request:\n%.2000s", reqs[0])
	}
	ella := logEntries(t, bin, vault, "ella")
	if len(ella) != 1 {
		t.Fatalf("ella has %d entries after one turn, want 1: %v", len(ella), ella)
	}
	if e := ella[0]; e["kind"] != "turn" || e["signed"] != true || e["agent"] != "ella" || !strings.Contains(fmt.Sprint(e["summary"]), "What changed overnight") {
		t.Errorf("ella's entry: %v", e)
	}

	// Turn 2: nothing new, nothing re-injected; one more entry.
	n := model.count()
	runOpenClaw(t, ocBin, env, home, "Please check the deploy pipeline for the API gateway")
	if reqs := model.since(n); len(reqs) == 0 || anyContains(reqs, "LYRA-1") {
		t.Errorf("turn 2: %d requests; lyra's acknowledged entry came again: %v", len(reqs), anyContains(reqs, "LYRA-1"))
	}
	if got := len(logEntries(t, bin, vault, "ella")); got != 2 {
		t.Errorf("ella has %d entries after two turns, want 2", got)
	}
	if out := nexus(t, bin, "--vault", vault, "log", "verify"); !strings.Contains(out, "OK") {
		t.Errorf("log verify after the turns:\n%s", out)
	}

	// Turn 3: Nexus unreachable — a server that accepts and never answers.
	// The turn still completes, within the plugin's time budget, and the
	// model's request carries the notice instead of the log.
	stalled := stalledServer(t)
	writeOpenClawConfig(t, home, srv.URL, map[string]any{"url": "http://" + stalled + "/mcp", "token": "nxs_test", "timeoutMs": 1000})
	n = model.count()
	runOpenClaw(t, ocBin, env, home, "Summarise the open incidents for the handover")
	reqs = model.since(n)
	if !anyContains(reqs, "Nexus (shared memory): the shared log could not be used") || !anyContains(reqs, "did not answer within 1000 ms") {
		t.Errorf("turn 3: no notice that Nexus did not answer; requests: %d\n%.3000s", len(reqs), strings.Join(reqs, "\n---\n"))
	}
	if got := len(logEntries(t, bin, vault, "ella")); got != 2 {
		t.Errorf("ella has %d entries; the unreachable turn wrote one", got)
	}
}

func anyContains(list []string, s string) bool {
	for _, x := range list {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

// stalledServer listens on a free loopback port, accepts connections and
// never answers, until the test ends.
func stalledServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}
