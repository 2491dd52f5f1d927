//go:build claudecode

package examples

// TestClaudeCodeHooks runs the Nexus hooks and MCP server
// (examples/claude-code, installed by its install.mjs) inside a real Claude
// Code from npm, against a scripted Anthropic Messages API server on
// 127.0.0.1: the shared log must reach the model before each reply, the
// turn must land in the vault after it, the memory tool must be offered and
// callable, a checkpoint must be saved on /compact, and a missing nexus must
// show in the turn's output.
//
// It needs Claude Code and Node installed outside the repository; .ci/run
// does that (npm, cached) and sets:
//
//	CLAUDE_BIN   path of the claude executable (the native binary of the
//	             @anthropic-ai/claude-code-linux-x64 npm package)
//	NODE_DIR     folder holding the node binary the hooks run with (optional:
//	             else node on PATH)
//
// Run: go test -tags claudecode -run ClaudeCode -v ./examples

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// anthropicModel is a scripted Anthropic Messages API: it records every
// request and answers POST /v1/messages (streamed or not) with a fixed
// text, or with a tool_use block when the user's message asks for one.
type anthropicModel struct {
	mu       sync.Mutex
	requests []string // bodies of POST /v1/messages
	other    []string // every other request: method and path
	reply    string
	// calls: when the user's latest message contains a key, the model's
	// first answer calls the tool named by the value with its input.
	calls map[string]toolUse
}

type toolUse struct {
	Name  string
	Input map[string]any
}

// messagesRequest is what the scripted model reads of a request.
type messagesRequest struct {
	Stream   bool `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// blocks returns a message content's blocks (a string is one text block).
func blocks(raw json.RawMessage) []map[string]any {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []map[string]any{{"type": "text", "text": s}}
	}
	var list []map[string]any
	json.Unmarshal(raw, &list)
	return list
}

// next decides the answer: a tool call, or the text reply.
func (m *anthropicModel) next(req messagesRequest) *toolUse {
	// The user's turn: the messages after the last assistant message
	// (Claude Code puts hook context in messages of its own).
	var text strings.Builder
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != "assistant"; i-- {
		for _, b := range blocks(req.Messages[i].Content) {
			if b["type"] == "tool_result" {
				return nil // the tool ran: answer in text
			}
			if s, ok := b["text"].(string); ok {
				text.WriteString(s)
			}
		}
	}
	for key, call := range m.calls {
		if !strings.Contains(text.String(), key) {
			continue
		}
		for _, t := range req.Tools {
			if t.Name == call.Name {
				return &call
			}
		}
	}
	return nil
}

func (m *anthropicModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		m.mu.Lock()
		m.other = append(m.other, r.Method+" "+r.URL.Path)
		m.mu.Unlock()
		io.WriteString(w, `{"input_tokens":100}`)
		return
	case r.Method != http.MethodPost || r.URL.Path != "/v1/messages":
		m.mu.Lock()
		m.other = append(m.other, r.Method+" "+r.URL.Path)
		m.mu.Unlock()
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"not scripted"}}`)
		return
	}
	var req messagesRequest
	json.Unmarshal(body, &req)
	m.mu.Lock()
	m.requests = append(m.requests, string(body))
	id := fmt.Sprintf("msg_%d", len(m.requests))
	call := m.next(req)
	reply := m.reply
	m.mu.Unlock()

	var content []map[string]any
	stop := "end_turn"
	if call != nil {
		content = []map[string]any{{"type": "tool_use", "id": "toolu_" + id, "name": call.Name, "input": call.Input}}
		stop = "tool_use"
	} else {
		content = []map[string]any{{"type": "text", "text": reply}}
	}
	usage := map[string]int{"input_tokens": 100, "output_tokens": 10}
	if !req.Stream {
		json.NewEncoder(w).Encode(map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": "scripted",
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(name string, data map[string]any) {
		data["type"] = name
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	event("message_start", map[string]any{"message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": "scripted",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 100, "output_tokens": 1},
	}})
	if call != nil {
		input, _ := json.Marshal(call.Input)
		event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "tool_use", "id": "toolu_" + id, "name": call.Name, "input": map[string]any{}}})
		event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
	} else {
		event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": reply}})
	}
	event("content_block_stop", map[string]any{"index": 0})
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 10}})
	event("message_stop", map[string]any{})
}

// since returns the message requests recorded after the first n.
func (m *anthropicModel) since(n int) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.requests[n:]...)
}

func (m *anthropicModel) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

// claudeCode is one installed Claude Code with its environment.
type claudeCode struct {
	bin, home, project string
	env                []string
}

func newClaudeCode(t *testing.T, modelURL string) *claudeCode {
	t.Helper()
	bin := os.Getenv("CLAUDE_BIN")
	if bin == "" {
		t.Fatal("CLAUDE_BIN must name an installed Claude Code (.ci/run installs it from npm)")
	}
	path := os.Getenv("PATH")
	if dir := os.Getenv("NODE_DIR"); dir != "" {
		path = dir + string(os.PathListSeparator) + path
	}
	c := &claudeCode{bin: bin, home: t.TempDir(), project: t.TempDir()}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "NEXUS_") || strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "CLAUDE_") || k == "PATH" || k == "HOME" {
			continue
		}
		c.env = append(c.env, kv)
	}
	c.env = append(c.env,
		"PATH="+path,
		"HOME="+c.home,
		"ANTHROPIC_BASE_URL="+modelURL,
		"ANTHROPIC_API_KEY=test",
		// No traffic beyond the scripted model on loopback.
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		// The MCP tools in the tools list, not behind ToolSearch.
		"ENABLE_TOOL_SEARCH=false",
		"NEXUS_HOOK_STATE="+filepath.Join(c.home, "nexus-state"),
		"NEXUS_SEARCH_HOLD=0",
	)
	return c
}

// install runs the documented installer for the project.
func (c *claudeCode) install(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("node", append([]string{"claude-code/install.mjs", "--project", c.project}, args...)...)
	cmd.Env = c.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install.mjs %v: %v\n%s", args, err, out)
	}
}

// run runs one non-interactive turn and returns its output.
func (c *claudeCode) run(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, append([]string{"-p"}, args...)...)
	cmd.Env = c.env
	cmd.Dir = c.project
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	t.Logf("claude -p %q: %s", args[0], time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("claude -p %q: %v\n%s\n%s", args[0], err, out, stderr.String())
	}
	return string(out)
}

// claude runs a claude subcommand (plugin, mcp) and returns its output.
func (c *claudeCode) claude(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(c.bin, args...)
	cmd.Env = c.env
	cmd.Dir = c.project
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// envValue returns the last value of key in env.
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// result returns the fields of a --output-format json result.
func result(t *testing.T, out string) (sessionID, text string) {
	t.Helper()
	var r struct {
		SessionID string `json:"session_id"`
		Result    string `json:"result"`
		IsError   bool   `json:"is_error"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.IsError {
		t.Fatalf("claude's result (err %v):\n%s", err, out)
	}
	return r.SessionID, r.Result
}

func TestClaudeCodeHooks(t *testing.T) {
	bin := buildNexus(t)
	vault := newVault(t, bin)
	nexus(t, bin, "--vault", vault, "--agent", "lyra", "log", "append", "--channel", "deploy", "--kind", "shipped", "LYRA-1 fixed the login timeout on the API gateway")

	model := &anthropicModel{
		reply: "The deploy pipeline is green and the gateway fix is live.",
		calls: map[string]toolUse{
			"Remember that the plugin":  {Name: "mcp__plugin_nexus_nexus__memory", Input: map[string]any{"action": "add", "content": "MODEL-MEM the plugin works"}},
			"Remember that the staging": {Name: "mcp__nexus__memory", Input: map[string]any{"action": "add", "content": "MODEL-MEM staging database moved to db-2"}},
			"Record in the shared log":  {Name: "mcp__nexus__log_append", Input: map[string]any{"summary": "MODEL-LOG staging database moved to db-2", "kind": "status"}},
		},
	}
	srv := httptest.NewServer(model) // 127.0.0.1, a free port
	defer srv.Close()
	defer func() {
		model.mu.Lock()
		t.Logf("model requests: %d /v1/messages; others: %v", len(model.requests), model.other)
		model.mu.Unlock()
	}()

	cc := newClaudeCode(t, srv.URL)
	// The project's own settings and servers: the installer keeps them.
	marker := filepath.Join(cc.home, "own-stop-hook-ran")
	os.MkdirAll(filepath.Join(cc.project, ".claude"), 0o755)
	own := fmt.Sprintf(`{"env":{"PROJECT_OWN":"1"},"hooks":{"Stop":[{"hooks":[{"type":"command","command":"touch %s"}]}]}}`, marker)
	if err := os.WriteFile(filepath.Join(cc.project, ".claude", "settings.json"), []byte(own), 0o644); err != nil {
		t.Fatal(err)
	}
	cc.install(t, "--agent", "claude", "--vault", vault, "--bin", bin)
	cc.install(t, "--agent", "claude", "--vault", vault, "--bin", bin) // idempotent
	allow := []string{"--allowedTools", "mcp__nexus__memory,mcp__nexus__log_append"}

	// Turn 1: lyra's unread entry reaches the model with the prompt; the
	// session-start snapshot too; the turn lands as one entry by claude.
	sid, text := result(t, cc.run(t, append([]string{"What changed overnight on staging?", "--output-format", "json"}, allow...)...))
	if text != model.reply {
		t.Errorf("turn 1 result %q", text)
	}
	reqs := model.since(0)
	if len(reqs) == 0 {
		t.Fatal("the model was never called")
	}
	if !someContain(reqs, "LYRA-1 fixed the login timeout") || !someContain(reqs, "Nexus session start for agent claude") {
		t.Errorf("no request carried lyra's unread entry and the session-start snapshot; first request:\n%.3000s", reqs[0])
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the project's own Stop hook did not run after the install: %v", err)
	}
	entries := entriesOf(t, bin, vault, "claude")
	if len(entries) != 1 {
		t.Fatalf("claude has %d entries after one turn, want 1: %v", len(entries), entries)
	}
	if e := entries[0]; e["kind"] != "turn" || e["signed"] != true || !strings.Contains(fmt.Sprint(e["summary"]), "What changed overnight") || !strings.Contains(fmt.Sprint(e["summary"]), "gateway fix is live") {
		t.Errorf("claude's turn entry: %v", e)
	}

	// Turn 2: a new entry of lyra's comes, the acknowledged one does not;
	// the memory tool is offered, the model calls it, the vault changes,
	// and the hook appends the turn (the model did not).
	nexus(t, bin, "--vault", vault, "--agent", "lyra", "log", "append", "LYRA-2 rotated the staging certificates")
	n := model.count()
	result(t, cc.run(t, append([]string{"Remember that the staging database moved to db-2", "--output-format", "json"}, allow...)...))
	reqs = model.since(n)
	if !someContain(reqs, "LYRA-2 rotated") || someContain(reqs, "LYRA-1 fixed") {
		t.Errorf("turn 2: LYRA-2 shown %v (want true), acknowledged LYRA-1 again %v (want false)", someContain(reqs, "LYRA-2 rotated"), someContain(reqs, "LYRA-1 fixed"))
	}
	if !someContain(reqs, `"name":"mcp__nexus__memory"`) {
		t.Errorf("turn 2: the memory tool was not in the tools list")
	}
	if !someContain(reqs, "tool_result") {
		t.Errorf("turn 2: the memory call's result never reached the model")
	}
	if mem, err := os.ReadFile(filepath.Join(vault, "agents", "claude", "MEMORY.md")); err != nil || !strings.Contains(string(mem), "MODEL-MEM staging database moved to db-2") {
		t.Errorf("MEMORY.md after the memory call (err %v):\n%s", err, mem)
	}
	if entries = entriesOf(t, bin, vault, "claude"); len(entries) != 2 || !strings.Contains(fmt.Sprint(entries[1]["summary"]), "Remember that") {
		t.Errorf("after turn 2 claude's entries are %v; want turn 1's and turn 2's", entries)
	}

	// Turn 3: the model records the turn itself; the hook adds nothing.
	result(t, cc.run(t, append([]string{"Record in the shared log that the staging database moved", "--output-format", "json"}, allow...)...))
	if entries = entriesOf(t, bin, vault, "claude"); len(entries) != 3 || entries[2]["summary"] != "MODEL-LOG staging database moved to db-2" {
		t.Errorf("after turn 3 claude's entries are %v; want the model's own as the third and nothing from the hook", entries)
	}

	// /compact in the session of turn 1: PreCompact saves a checkpoint.
	cc.run(t, "/compact", "--resume", sid, "--output-format", "json")
	cp := nexus(t, bin, "--vault", vault, "--agent", "claude", "checkpoint", "show")
	if !strings.Contains(cp, "What changed overnight on staging?") || !strings.Contains(cp, "context compacted (manual)") {
		t.Errorf("checkpoint after /compact:\n%s", cp)
	}
	if entries = entriesOf(t, bin, vault, "claude"); len(entries) != 3 {
		t.Errorf("/compact appended a turn: %v", entries)
	}

	// Turn 4: nexus is missing. The turn completes; its output shows the
	// notice, and so does the model's request.
	cc.install(t, "--agent", "claude", "--vault", vault, "--bin", filepath.Join(t.TempDir(), "missing", "nexus"))
	n = model.count()
	out := cc.run(t, append([]string{"Summarise the open incidents for the handover", "--output-format", "stream-json", "--verbose"}, allow...)...)
	const notice = "Nexus (shared memory): the shared log could not be used"
	if !strings.Contains(out, notice) || !strings.Contains(out, "not found (install nexus") {
		t.Errorf("turn 4: the output carries no notice that nexus is missing:\n%.4000s", out)
	}
	if !strings.Contains(out, `"subtype":"success"`) {
		t.Errorf("turn 4 did not complete:\n%.2000s", out)
	}
	// The turn's own hooks (mcp_tool calls on the nexus server, which
	// answers them though nexus serve could not run) said it, not only
	// the session's start.
	if !strings.Contains(out, "UserPromptSubmit says: ⚠ Nexus") || !strings.Contains(out, "Stop says: ⚠ Nexus") {
		t.Errorf("turn 4: UserPromptSubmit and Stop did not both give the notice:\n%.4000s", out)
	}
	if reqs = model.since(n); !someContain(reqs, notice) {
		t.Errorf("turn 4: the model was not told that the shared log could not be used")
	}

	// The hooks' tool is answered, never offered to the model.
	for _, r := range model.since(0) {
		if strings.Contains(r, `"name":"mcp__nexus__claude_code_hook"`) || strings.Contains(r, `"name":"claude_code_hook"`) {
			t.Errorf("the model was offered the hooks' tool")
			break
		}
	}

	// Turn 5: nexus is back. The notice that turn 4 was not recorded,
	// kept on disk, reaches the model; the log works again.
	cc.install(t, "--agent", "claude", "--vault", vault, "--bin", bin)
	n = model.count()
	result(t, cc.run(t, append([]string{"What is still open on staging?", "--output-format", "json"}, allow...)...))
	if reqs = model.since(n); !someContain(reqs, "the last turn was not recorded in the shared log") {
		t.Errorf("turn 5: the notice of turn 4's lost record did not reach the model")
	}
	if entries = entriesOf(t, bin, vault, "claude"); len(entries) != 4 || !strings.Contains(fmt.Sprint(entries[3]["summary"]), "What is still open") {
		t.Errorf("after turn 5 claude's entries are %v", entries)
	}

	// The same as a Claude Code plugin, installed the documented way into
	// a fresh project with no settings of its own: the agent and vault come
	// from the environment, the MCP server's nexus from PATH.
	marketplace, err := filepath.Abs("claude-code")
	if err != nil {
		t.Fatal(err)
	}
	cc.claude(t, "plugin", "marketplace", "add", marketplace)
	cc.claude(t, "plugin", "install", "nexus@nexus")
	cc.project = t.TempDir()
	cc.env = append(cc.env, "NEXUS_AGENT=claude", "NEXUS_VAULT="+vault, "NEXUS_BIN="+bin,
		"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+envValue(cc.env, "PATH"))
	nexus(t, bin, "--vault", vault, "--agent", "lyra", "log", "append", "LYRA-3 the plugin sees this")
	n = model.count()
	result(t, cc.run(t, "Remember that the plugin works", "--output-format", "json", "--allowedTools", "mcp__plugin_nexus_nexus__memory"))
	reqs = model.since(n)
	if !someContain(reqs, "LYRA-3 the plugin sees this") || !someContain(reqs, "Nexus session start for agent claude") {
		t.Errorf("plugin: the unread entry or the snapshot did not reach the model")
	}
	if !someContain(reqs, `"name":"mcp__plugin_nexus_nexus__memory"`) || !someContain(reqs, "tool_result") {
		t.Errorf("plugin: the memory tool was not offered or not called")
	}
	if entries = entriesOf(t, bin, vault, "claude"); len(entries) != 5 || !strings.Contains(fmt.Sprint(entries[4]["summary"]), "the plugin works") {
		t.Errorf("plugin: after its turn claude's entries are %v", entries)
	}
	if out := nexus(t, bin, "--vault", vault, "log", "verify"); !strings.Contains(out, "OK") {
		t.Errorf("log verify after the turns:\n%s", out)
	}
}

func someContain(list []string, s string) bool {
	for _, x := range list {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}
