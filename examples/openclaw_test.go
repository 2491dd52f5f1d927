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
	// record: when the user's message contains this, the model's first
	// answer is a call of the offered *log_append tool with summary
	// recordSummary (the model records the turn itself).
	record, recordSummary string
}

// chatRequest is what the scripted model reads of a request.
type chatRequest struct {
	Stream   bool `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// toolCall returns the name of the log_append tool to call, or "".
func (m *scriptedModel) toolCall(req chatRequest) string {
	if m.record == "" || len(req.Messages) == 0 {
		return ""
	}
	// The user's turn is the trailing run of user messages (OpenClaw may
	// add one of its own, with runtime details, after the request).
	asked := false
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == "user"; i-- {
		asked = asked || strings.Contains(string(req.Messages[i].Content), m.record)
	}
	if !asked {
		return ""
	}
	for _, t := range req.Tools {
		if strings.HasSuffix(t.Function.Name, "log_append") {
			return t.Function.Name
		}
	}
	return ""
}

func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"scripted","object":"model"}]}`)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req chatRequest
	json.Unmarshal(body, &req)
	m.mu.Lock()
	m.requests = append(m.requests, string(body))
	reply := m.reply
	tool := m.toolCall(req)
	m.mu.Unlock()
	text, _ := json.Marshal(reply)
	created := time.Now().Unix()
	if tool != "" {
		args, _ := json.Marshal(map[string]string{"summary": m.recordSummary, "kind": "status"})
		call, _ := json.Marshal([]map[string]any{{"index": 0, "id": "call_1", "type": "function", "function": map[string]string{"name": tool, "arguments": string(args)}}})
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"c2","object":"chat.completion","created":%d,"model":"scripted","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":%s},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}`, created, call)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"id\":\"c2\",\"object\":\"chat.completion.chunk\",\"created\":%d,\"model\":\"scripted\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":%s},\"finish_reason\":null}]}\n\n", created, call)
		fmt.Fprintf(w, "data: {\"id\":\"c2\",\"object\":\"chat.completion.chunk\",\"created\":%d,\"model\":\"scripted\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":10,\"total_tokens\":20}}\n\n", created)
		io.WriteString(w, "data: [DONE]\n\n")
		return
	}
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
func writeOpenClawConfig(t *testing.T, home, modelURL string, nexusConfig map[string]any, mcpServers map[string]any) {
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
		// The 13 Nexus tools directly, not behind tool_search/tool_call.
		"tools": map[string]any{"toolSearch": false},
		"mcp":   map[string]any{"servers": mcpServers},
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
	mcpServers := map[string]any{"nexus": map[string]any{
		"command": bin, "args": []string{"serve", "--stdio", "--agent", "ella"},
		"env": map[string]string{"NEXUS_VAULT": vault, "NEXUS_SEARCH_HOLD": "0"},
	}}
	writeOpenClawConfig(t, home, srv.URL, map[string]any{"vault": vault, "agent": "ella", "bin": bin, "timeoutMs": 20000}, mcpServers)

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

	// Turn 2: nothing new, nothing re-injected. The model records the
	// turn itself through the MCP tool: the plugin adds nothing, and the
	// tool's result reaches the model once (not twice, as structured
	// content and again as text).
	model.mu.Lock()
	model.record, model.recordSummary = "Record in the shared log", "MODEL-2 the deploy pipeline for the API gateway is green"
	model.mu.Unlock()
	n := model.count()
	runOpenClaw(t, ocBin, env, home, "Record in the shared log that the deploy pipeline for the API gateway is green")
	reqs = model.since(n)
	if len(reqs) == 0 || anyContains(reqs, "LYRA-1") {
		t.Errorf("turn 2: %d requests; lyra's acknowledged entry came again: %v", len(reqs), anyContains(reqs, "LYRA-1"))
	}
	ella = logEntries(t, bin, vault, "ella")
	if len(ella) != 2 || ella[1]["summary"] != model.recordSummary || ella[1]["signed"] != true {
		t.Errorf("after turn 2 ella's entries are %v; want turn 1's and the model's own, nothing from the plugin", ella)
	}
	if results := toolResults(t, reqs); len(results) == 0 {
		t.Errorf("turn 2: the model's log_append call never came back as a tool result (requests: %d)", len(reqs))
	} else if c := strings.Count(results[0], "MODEL-2 the deploy pipeline"); c != 1 {
		t.Errorf("turn 2: the log_append result reached the model %d times:\n%s", c, results[0])
	}
	if out := nexus(t, bin, "--vault", vault, "log", "verify"); !strings.Contains(out, "OK") {
		t.Errorf("log verify after the turns:\n%s", out)
	}

	// Turn 3: Nexus unreachable — a server that accepts and never answers.
	// The turn still completes, within the plugin's time budget, and the
	// model's request carries the notice instead of the log.
	stalled := stalledServer(t)
	writeOpenClawConfig(t, home, srv.URL, map[string]any{"url": "http://" + stalled + "/mcp", "token": "nxs_test", "timeoutMs": 1000}, mcpServers)
	n = model.count()
	runOpenClaw(t, ocBin, env, home, "Summarise the open incidents for the handover")
	reqs = model.since(n)
	if !anyContains(reqs, "Nexus (shared memory): the shared log could not be used") || !anyContains(reqs, "did not answer within 1000 ms") {
		t.Errorf("turn 3: no notice that Nexus did not answer; requests: %d\n%.3000s", len(reqs), strings.Join(reqs, "\n---\n"))
	}
	if got := len(logEntries(t, bin, vault, "ella")); got != 2 {
		t.Errorf("ella has %d entries; the unreachable turn wrote one", got)
	}

	// Turn 4, a new process with Nexus back: turn 3's notice comes again
	// (kept on disk, not in the process that died), and the log too.
	writeOpenClawConfig(t, home, srv.URL, map[string]any{"vault": vault, "agent": "ella", "bin": bin, "timeoutMs": 20000}, mcpServers)
	nexus(t, bin, "--vault", vault, "--agent", "lyra", "log", "append", "LYRA-4 rolled the gateway fix to production")
	n = model.count()
	runOpenClaw(t, ocBin, env, home, "What happened while Nexus was away?")
	reqs = model.since(n)
	if !anyContains(reqs, "did not answer within 1000 ms") || !anyContains(reqs, "LYRA-4 rolled the gateway fix") {
		t.Errorf("turn 4: turn 3's notice again %v (want true), lyra's new entry %v (want true); requests: %d",
			anyContains(reqs, "did not answer within 1000 ms"), anyContains(reqs, "LYRA-4 rolled the gateway fix"), len(reqs))
	}
	if _, err := os.Stat(filepath.Join(home, ".openclaw", "nexus")); err != nil {
		t.Errorf("the notices were not kept under OPENCLAW_HOME: %v", err)
	}
}

// toolResults returns the contents of the tool-role messages of requests,
// as JSON text.
func toolResults(t *testing.T, requests []string) []string {
	t.Helper()
	var out []string
	for _, r := range requests {
		var req chatRequest
		if err := json.Unmarshal([]byte(r), &req); err != nil {
			t.Fatalf("a model request is not JSON: %v", err)
		}
		for _, m := range req.Messages {
			if m.Role == "tool" {
				var s string
				if json.Unmarshal(m.Content, &s) != nil {
					s = string(m.Content)
				}
				out = append(out, s)
			}
		}
	}
	return out
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
