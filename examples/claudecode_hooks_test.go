package examples

// The Claude Code hooks (examples/claude-code) without Claude Code: the
// installer on a project that has settings of its own, and the hook script
// called in Claude Code's order with the JSON inputs Claude Code documents,
// against a real vault and the real nexus. The real Claude Code runs them in
// claudecode_test.go (build tag claudecode).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func needNode(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the hook commands are POSIX shell commands")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed (the Claude Code hooks are Node scripts)")
	}
}

func readJSONFile(t *testing.T, file string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v\n%s", file, err, data)
	}
	return doc
}

func runInstaller(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command("node", append([]string{"claude-code/install.mjs"}, args...)...).CombinedOutput()
	return string(out), err
}

func TestClaudeCodeInstallMerges(t *testing.T) {
	needNode(t)
	project := t.TempDir()
	os.MkdirAll(filepath.Join(project, ".claude"), 0o755)
	own := `{"model":"opus","permissions":{"allow":["Bash(ls:*)"]},"enabledMcpjsonServers":["other"],
"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo own-stop"}]}],"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"echo own-pre"}]}]}}`
	os.WriteFile(filepath.Join(project, ".claude", "settings.json"), []byte(own), 0o644)
	os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(`{"mcpServers":{"other":{"command":"other-server"}}}`), 0o644)

	for i := 0; i < 2; i++ { // the second run changes nothing
		if out, err := runInstaller(t, "--agent", "claude", "--project", project, "--vault", "/srv/my vault"); err != nil {
			t.Fatalf("install: %v\n%s", err, out)
		}
	}
	settings := readJSONFile(t, filepath.Join(project, ".claude", "settings.json"))
	if settings["model"] != "opus" || fmt.Sprint(settings["permissions"]) != "map[allow:[Bash(ls:*)]]" {
		t.Errorf("the project's own settings changed: %v", settings)
	}
	if got := fmt.Sprint(settings["enabledMcpjsonServers"]); got != "[other nexus]" {
		t.Errorf("enabledMcpjsonServers = %s", got)
	}
	hooks := settings["hooks"].(map[string]any)
	want := `node "$CLAUDE_PROJECT_DIR/.claude/hooks/nexus-hook.mjs" --agent claude --vault '/srv/my vault'`
	for _, event := range []string{"SessionStart", "UserPromptSubmit", "PreCompact", "Stop"} {
		var ours, others []string
		for _, g := range hooks[event].([]any) {
			for _, h := range g.(map[string]any)["hooks"].([]any) {
				hm := h.(map[string]any)
				if hm["type"] == "mcp_tool" {
					// A turn's hooks call the nexus server's hook tool
					// with the hook's own fields.
					in := hm["input"].(map[string]any)
					if hm["server"] != "nexus" || hm["tool"] != "claude_code_hook" || in["hook_event_name"] != "${hook_event_name}" || in["prompt_id"] != "${prompt_id}" {
						t.Errorf("%s: %v", event, hm)
					}
					ours = append(ours, want)
					continue
				}
				cmd := hm["command"].(string)
				if strings.Contains(cmd, "nexus-hook.mjs") {
					ours = append(ours, cmd)
				} else {
					others = append(others, cmd)
				}
			}
		}
		if len(ours) != 1 || ours[0] != want {
			t.Errorf("%s: Nexus hooks %q, want exactly [%s]", event, ours, want)
		}
		if event == "Stop" && !reflect.DeepEqual(others, []string{"echo own-stop"}) {
			t.Errorf("Stop: the project's own hooks are %q", others)
		}
	}
	if pre := fmt.Sprint(hooks["PreToolUse"]); !strings.Contains(pre, "echo own-pre") {
		t.Errorf("PreToolUse lost: %s", pre)
	}
	mcp := readJSONFile(t, filepath.Join(project, ".mcp.json"))["mcpServers"].(map[string]any)
	hookFile := filepath.Join(project, ".claude", "hooks", "nexus-hook.mjs")
	if mcp["other"] == nil || fmt.Sprint(mcp["nexus"]) != "map[args:["+hookFile+" --mcp --agent claude --vault /srv/my vault] command:node env:map[NEXUS_VAULT:/srv/my vault] type:stdio]" {
		t.Errorf(".mcp.json servers: %v", mcp)
	}
	if _, err := os.Stat(filepath.Join(project, ".claude", "hooks", "nexus-hook.mjs")); err != nil {
		t.Errorf("the hook script was not copied: %v", err)
	}

	// A settings file that is not JSON is left alone, and so is the rest.
	broken := t.TempDir()
	os.MkdirAll(filepath.Join(broken, ".claude"), 0o755)
	os.WriteFile(filepath.Join(broken, ".claude", "settings.json"), []byte(`{"hooks": {`), 0o644)
	if out, err := runInstaller(t, "--agent", "claude", "--project", broken); err == nil || !strings.Contains(out, "not valid JSON") {
		t.Errorf("install over a broken settings.json: err %v\n%s", err, out)
	}
	if data, _ := os.ReadFile(filepath.Join(broken, ".claude", "settings.json")); string(data) != `{"hooks": {` {
		t.Errorf("the broken settings.json was changed: %s", data)
	}
	if _, err := os.Stat(filepath.Join(broken, ".mcp.json")); err == nil {
		t.Errorf("the install went on after refusing settings.json")
	}
	if out, err := runInstaller(t, "--project", project); err == nil || !strings.Contains(out, "--agent is required") {
		t.Errorf("install without --agent: err %v\n%s", err, out)
	}
}

// hookRun calls the hook script as Claude Code does: the input on stdin,
// the settings on the command line; it returns the parsed output (nil for
// none).
func hookRun(t *testing.T, env []string, input map[string]any, args ...string) map[string]any {
	t.Helper()
	data, _ := json.Marshal(input)
	cmd := exec.Command("node", append([]string{"claude-code/plugin/nexus-hook.mjs"}, args...)...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(string(data))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hook %s: %v\n%s", input["hook_event_name"], err, out)
	}
	if strings.TrimSpace(string(out)) == "" {
		return nil
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("hook %s printed no JSON: %v\n%s", input["hook_event_name"], err, out)
	}
	return doc
}

// addedContext returns the hook's additionalContext.
func addedContext(doc map[string]any) string {
	h, _ := doc["hookSpecificOutput"].(map[string]any)
	s, _ := h["additionalContext"].(string)
	return s
}

// transcriptLine is one line of a Claude Code transcript.
func transcriptLine(t *testing.T, typ, role string, content any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"type": typ, "uuid": fmt.Sprintf("u-%s-%v", typ, content)[:20], "message": map[string]any{"role": role, "content": content}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestClaudeCodeHookSession(t *testing.T) {
	needNode(t)
	bin := buildNexus(t)
	vault := newVault(t, bin)
	nexus(t, bin, "--vault", vault, "--agent", "lyra", "log", "append", "LYRA-1 fixed the login timeout")
	state := t.TempDir()
	env := append(os.Environ(), "NEXUS_HOOK_STATE="+state, "NEXUS_AGENT=", "NEXUS_VAULT=", "NEXUS_BIN=")
	args := []string{"--agent", "claude", "--vault", vault, "--bin", bin}
	dir := t.TempDir()
	transcript := filepath.Join(dir, "session.jsonl")
	base := map[string]any{"session_id": "s-1", "transcript_path": transcript, "cwd": dir}
	with := func(fields map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range fields {
			m[k] = v
		}
		return m
	}

	// SessionStart: the snapshot, without the unread entries.
	out := hookRun(t, env, with(map[string]any{"hook_event_name": "SessionStart", "source": "startup"}), args...)
	if ctx := addedContext(out); !strings.Contains(ctx, "Nexus session start for agent claude") || !strings.Contains(ctx, "IDENTITY") || strings.Contains(ctx, "LYRA-1") {
		t.Errorf("SessionStart context:\n%s", ctx)
	}
	// UserPromptSubmit: the unread entry, acknowledged; the next prompt
	// adds nothing.
	prompt := with(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "What changed overnight?"})
	if ctx := addedContext(hookRun(t, env, prompt, args...)); !strings.Contains(ctx, "LYRA-1 fixed the login timeout") || !strings.Contains(ctx, "acknowledged") {
		t.Errorf("UserPromptSubmit context:\n%s", ctx)
	}
	if out := hookRun(t, env, prompt, args...); out != nil {
		t.Errorf("second UserPromptSubmit added %v", out)
	}

	// Stop after a turn that edited a file and did not append: one entry,
	// and a second Stop for the same turn adds nothing (the key).
	lines := []string{
		transcriptLine(t, "user", "user", "What changed overnight?"),
		transcriptLine(t, "assistant", "assistant", []any{map[string]any{"type": "tool_use", "id": "t1", "name": "Edit", "input": map[string]any{"file_path": "/src/gateway.go"}}}),
		transcriptLine(t, "user", "user", []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}}),
		transcriptLine(t, "assistant", "assistant", []any{map[string]any{"type": "text", "text": "The gateway timeout is fixed."}}),
	}
	os.WriteFile(transcript, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	stop := with(map[string]any{"hook_event_name": "Stop", "stop_hook_active": false})
	for i := 0; i < 2; i++ {
		if out := hookRun(t, env, stop, args...); out != nil {
			t.Errorf("Stop printed %v", out)
		}
	}
	entries := entriesOf(t, bin, vault, "claude")
	if len(entries) != 1 || entries[0]["summary"] != "What changed overnight? → The gateway timeout is fixed." || entries[0]["kind"] != "turn" {
		t.Fatalf("after Stop claude's entries are %v", entries)
	}

	// A turn in which the model called log_append itself: nothing added.
	lines = append(lines,
		transcriptLine(t, "user", "user", "Record that the gateway is fixed"),
		transcriptLine(t, "assistant", "assistant", []any{map[string]any{"type": "tool_use", "id": "t2", "name": "mcp__nexus__log_append", "input": map[string]any{"summary": "gateway fixed"}}}),
		transcriptLine(t, "user", "user", []any{map[string]any{"type": "tool_result", "tool_use_id": "t2", "content": "{}"}}),
		transcriptLine(t, "assistant", "assistant", []any{map[string]any{"type": "text", "text": "Recorded."}}),
	)
	os.WriteFile(transcript, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	hookRun(t, env, stop, args...)
	if got := len(entriesOf(t, bin, vault, "claude")); got != 1 {
		t.Errorf("Stop after the model's own log_append: %d entries, want 1", got)
	}

	// PreCompact: a checkpoint with the request and the files edited.
	hookRun(t, env, with(map[string]any{"hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}), args...)
	cp := nexus(t, bin, "--vault", vault, "--agent", "claude", "checkpoint", "show")
	for _, want := range []string{"Record that the gateway is fixed", "context compacted (auto)", "/src/gateway.go"} {
		if !strings.Contains(cp, want) {
			t.Errorf("checkpoint lacks %q:\n%s", want, cp)
		}
	}

	// nexus missing: every hook says so (systemMessage); the lost record
	// is kept on disk and told to the model at the next prompt, once.
	missing := []string{"--agent", "claude", "--vault", vault, "--bin", filepath.Join(dir, "no", "nexus")}
	out = hookRun(t, env, prompt, missing...)
	if msg, _ := out["systemMessage"].(string); !strings.Contains(msg, "the shared log could not be used") || !strings.Contains(msg, "not found") || !strings.Contains(addedContext(out), msg) {
		t.Errorf("UserPromptSubmit without nexus: %v", out)
	}
	lines = append(lines,
		transcriptLine(t, "user", "user", "Summarise the open incidents"),
		transcriptLine(t, "assistant", "assistant", []any{map[string]any{"type": "text", "text": "Two incidents are open."}}),
	)
	os.WriteFile(transcript, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	out = hookRun(t, env, stop, missing...)
	if msg, _ := out["systemMessage"].(string); !strings.Contains(msg, "the last turn was not recorded") {
		t.Errorf("Stop without nexus: %v", out)
	}
	out = hookRun(t, env, with(map[string]any{"hook_event_name": "PreCompact", "trigger": "manual"}), missing...)
	if msg, _ := out["systemMessage"].(string); !strings.Contains(msg, "no checkpoint was saved before the compaction") {
		t.Errorf("PreCompact without nexus: %v", out)
	}
	out = hookRun(t, env, prompt, args...)
	if ctx := addedContext(out); !strings.Contains(ctx, "the last turn was not recorded") || !strings.Contains(ctx, "no checkpoint was saved") || out["systemMessage"] == nil {
		t.Errorf("the next prompt did not carry the lost record's notice: %v", out)
	}
	if out = hookRun(t, env, prompt, args...); out != nil {
		t.Errorf("the notice came twice: %v", out)
	}

	// A nexus that never answers: a notice naming the time budget.
	stalled := filepath.Join(dir, "stalled-nexus")
	os.WriteFile(stalled, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755)
	out = hookRun(t, append(env, "NEXUS_TIMEOUT_MS=300"), prompt, "--agent", "claude", "--bin", stalled)
	if msg, _ := out["systemMessage"].(string); !strings.Contains(msg, "timed out after 300 ms") {
		t.Errorf("stalled nexus: %v", out)
	}
	// No agent: said so, not silent.
	out = hookRun(t, env, prompt, "--bin", bin)
	if msg, _ := out["systemMessage"].(string); !strings.Contains(msg, "no agent") {
		t.Errorf("no agent: %v", out)
	}
}

// entriesOf returns the live-log entries written by who.
func entriesOf(t *testing.T, bin, vault, who string) []map[string]any {
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

// TestClaudeCodePluginShape checks the plugin and its marketplace against
// each other and against the installer (claudecode_test.go installs and
// runs the plugin in a real Claude Code).
func TestClaudeCodePluginShape(t *testing.T) {
	market := readJSONFile(t, "claude-code/.claude-plugin/marketplace.json")
	entry := market["plugins"].([]any)[0].(map[string]any)
	dir := filepath.Join("claude-code", filepath.FromSlash(entry["source"].(string)))
	manifest := readJSONFile(t, filepath.Join(dir, ".claude-plugin", "plugin.json"))
	if manifest["name"] != entry["name"] || market["name"] != "nexus" || manifest["name"] != "nexus" {
		t.Errorf("names: marketplace %v, its entry %v, plugin.json %v; the README says nexus@nexus", market["name"], entry["name"], manifest["name"])
	}
	hooks := readJSONFile(t, filepath.Join(dir, "hooks", "hooks.json"))["hooks"].(map[string]any)
	src, err := os.ReadFile("claude-code/install.mjs")
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for event, groups := range hooks {
		events = append(events, event)
		h := groups.([]any)[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)
		switch event {
		case "UserPromptSubmit", "Stop":
			// A plugin's MCP server is named plugin:PLUGIN:SERVER.
			if h["type"] != "mcp_tool" || h["server"] != "plugin:nexus:nexus" || h["tool"] != "claude_code_hook" {
				t.Errorf("%s: %v", event, h)
			}
		default:
			if h["command"] != `node "${CLAUDE_PLUGIN_ROOT}/nexus-hook.mjs"` {
				t.Errorf("%s runs %v", event, h["command"])
			}
		}
		if !strings.Contains(string(src), `"`+event+`"`) {
			t.Errorf("the plugin hooks %s, the installer does not", event)
		}
	}
	if len(events) != 4 {
		t.Errorf("the plugin hooks %v, want SessionStart, UserPromptSubmit, PreCompact, Stop", events)
	}
	if _, err := os.Stat(filepath.Join(dir, "nexus-hook.mjs")); err != nil {
		t.Error(err)
	}
	server := readJSONFile(t, filepath.Join(dir, ".mcp.json"))["mcpServers"].(map[string]any)["nexus"].(map[string]any)
	if fmt.Sprintf("%v %v", server["command"], server["args"]) != "node [${CLAUDE_PLUGIN_ROOT}/nexus-hook.mjs --mcp]" {
		t.Errorf("the plugin's MCP server: %v", server)
	}
}

// TestClaudeCodeHookRecall: with NEXUS_RECALL the prompt goes through
// nexus search and the best facts and notes come with the unread entries,
// the log and memory indexes left out; without it, no search.
func TestClaudeCodeHookRecall(t *testing.T) {
	needNode(t)
	bin := buildNexus(t)
	vault := newVault(t, bin)
	nexus(t, bin, "--vault", vault, "--agent", "lyra", "fact", "write", "--name", "Deploy window", "--type", "project",
		"--description", "when production deploys happen", "Deploys to production only on Tuesdays after 14:00 KST.")
	nexus(t, bin, "--vault", vault, "--agent", "lyra", "log", "append", "Deploy window discussed in the log")
	args := []string{"--agent", "claude", "--vault", vault, "--bin", bin}
	prompt := map[string]any{"hook_event_name": "UserPromptSubmit", "session_id": "s-r", "cwd": t.TempDir(), "prompt": "When may we deploy to production?"}
	base := append(os.Environ(), "NEXUS_HOOK_STATE="+t.TempDir(), "NEXUS_AGENT=", "NEXUS_VAULT=", "NEXUS_BIN=", "NEXUS_SEARCH_HOLD=0")

	for _, tc := range []struct {
		name string
		env  []string
		want bool
	}{
		{"off by default", []string{"NEXUS_RECALL="}, false},
		{"on", []string{"NEXUS_RECALL=1", "NEXUS_RECALL_LIMIT=2"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := addedContext(hookRun(t, append(base, tc.env...), prompt, args...))
			i := strings.Index(ctx, "Relevant in the shared vault")
			if (i >= 0) != tc.want {
				t.Fatalf("relevance part present %v, want %v:\n%s", i >= 0, tc.want, ctx)
			}
			if !tc.want {
				return
			}
			relevant := ctx[i:]
			if !strings.Contains(relevant, "agents/lyra/memory/deploy-window.md:") || !strings.Contains(relevant, "Tuesdays") {
				t.Errorf("the fact is not in the relevance part:\n%s", relevant)
			}
			if strings.Contains(relevant, "log/live/") || strings.Contains(relevant, "INDEX.md") {
				t.Errorf("a log entry or a memory index came as relevant:\n%s", relevant)
			}
			if n := strings.Count(relevant, "\n- "); n < 1 || n > 2 {
				t.Errorf("%d relevant lines, want 1-2 (NEXUS_RECALL_LIMIT=2):\n%s", n, relevant)
			}
		})
	}
	// A trivial prompt searches nothing (and here finds nothing unread).
	trivial := map[string]any{"hook_event_name": "UserPromptSubmit", "session_id": "s-r", "cwd": t.TempDir(), "prompt": "ok"}
	if out := hookRun(t, append(base, "NEXUS_RECALL=1"), trivial, args...); out != nil {
		t.Errorf("a trivial prompt added %v", out)
	}
}

// TestClaudeCodeHookReadFailureSaidTwice: a prompt whose read failed says
// so in that turn and again at the next prompt (a new process), then no
// more.
func TestClaudeCodeHookReadFailureSaidTwice(t *testing.T) {
	needNode(t)
	bin := buildNexus(t)
	vault := newVault(t, bin)
	env := append(os.Environ(), "NEXUS_HOOK_STATE="+t.TempDir(), "NEXUS_AGENT=", "NEXUS_VAULT=", "NEXUS_BIN=")
	prompt := map[string]any{"hook_event_name": "UserPromptSubmit", "session_id": "s-f", "cwd": t.TempDir(), "prompt": "What changed?"}
	missing := filepath.Join(t.TempDir(), "no", "nexus")
	out := hookRun(t, env, prompt, "--agent", "claude", "--vault", vault, "--bin", missing)
	if msg, _ := out["systemMessage"].(string); !strings.Contains(msg, "not found") {
		t.Fatalf("the failed read is not said in its turn: %v", out)
	}
	out = hookRun(t, env, prompt, "--agent", "claude", "--vault", vault, "--bin", bin)
	if msg, _ := out["systemMessage"].(string); !strings.Contains(msg, "not found") || !strings.Contains(addedContext(out), "not found") {
		t.Errorf("the failed read is not said again at the next prompt: %v", out)
	}
	if out = hookRun(t, env, prompt, "--agent", "claude", "--vault", vault, "--bin", bin); out != nil {
		t.Errorf("said a third time: %v", out)
	}
}

// hookServer is nexus-hook.mjs --mcp, driven as Claude Code drives its
// "nexus" MCP server: the model's calls pass through to nexus serve, the
// mcp_tool hooks' calls of claude_code_hook are answered by the script.
type hookServer struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Scanner
	id  int
}

func startHookServer(t *testing.T, env []string, args ...string) *hookServer {
	t.Helper()
	cmd := exec.Command("node", append([]string{"claude-code/plugin/nexus-hook.mjs", "--mcp"}, args...)...)
	cmd.Env = env
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	s := &hookServer{t: t, in: in, out: bufio.NewScanner(out)}
	s.out.Buffer(nil, 16<<20)
	s.rpc("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "1"}})
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

// rpc sends one request and returns its result (failing on an error).
func (s *hookServer) rpc(method string, params any) map[string]any {
	s.t.Helper()
	s.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.id, "method": method, "params": params})
	fmt.Fprintf(s.in, "%s\n", b)
	for s.out.Scan() {
		var msg struct {
			ID     any            `json:"id"`
			Result map[string]any `json:"result"`
			Error  any            `json:"error"`
		}
		if json.Unmarshal(s.out.Bytes(), &msg) != nil || msg.ID != float64(s.id) {
			continue // a notification
		}
		if msg.Error != nil {
			s.t.Fatalf("%s: %v", method, msg.Error)
		}
		return msg.Result
	}
	s.t.Fatalf("%s: the server ended: %v", method, s.out.Err())
	return nil
}

// hook calls the hooks' tool as an mcp_tool hook does and returns the
// hook output it answers.
func (s *hookServer) hook(input map[string]any) map[string]any {
	s.t.Helper()
	res := s.rpc("tools/call", map[string]any{"name": "claude_code_hook", "arguments": input})
	text := res["content"].([]any)[0].(map[string]any)["text"].(string)
	var doc map[string]any
	if err := json.Unmarshal([]byte(text), &doc); err != nil || res["isError"] == true {
		s.t.Fatalf("the hook answered %v: %s", res["isError"], text)
	}
	return doc
}

func TestClaudeCodeHookServer(t *testing.T) {
	needNode(t)
	bin := buildNexus(t)
	vault := newVault(t, bin)
	env := append(os.Environ(), "NEXUS_HOOK_STATE="+t.TempDir(), "NEXUS_AGENT=", "NEXUS_VAULT=", "NEXUS_BIN=")
	s := startHookServer(t, env, "--agent", "claude", "--vault", vault, "--bin", bin)

	var names []string
	for _, tool := range s.rpc("tools/list", map[string]any{})["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	if !slices.Contains(names, "memory") || !slices.Contains(names, "log_append") || slices.Contains(names, "claude_code_hook") {
		t.Errorf("tools/list: %v (want Nexus's tools, not the hooks' tool)", names)
	}

	nexus(t, bin, "--vault", vault, "--agent", "lyra", "log", "append", "LYRA-7 rotated the staging keys")
	turn := func(id, prompt, reply string) (map[string]any, map[string]any) {
		base := map[string]any{"session_id": "s-9", "prompt_id": id, "cwd": t.TempDir(), "transcript_path": ""}
		up := map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": prompt}
		stop := map[string]any{"hook_event_name": "Stop", "last_assistant_message": reply}
		maps.Copy(up, base)
		maps.Copy(stop, base)
		return s.hook(up), s.hook(stop)
	}
	up, _ := turn("p-1", "What changed on staging?", "The keys were rotated.")
	if ctx := addedContext(up); !strings.Contains(ctx, "LYRA-7 rotated the staging keys") || !strings.Contains(ctx, "acknowledged") {
		t.Errorf("turn 1 context:\n%s", ctx)
	}
	up, _ = turn("p-2", "And the database?", "Unchanged.")
	if strings.Contains(addedContext(up), "LYRA-7") {
		t.Errorf("turn 2 was shown the acknowledged entry again")
	}
	// A Stop given again for the same turn (a retry) lands once: its key
	// is the turn's id.
	s.hook(map[string]any{"hook_event_name": "Stop", "session_id": "s-9", "prompt_id": "p-2", "last_assistant_message": "Unchanged."})
	got := entriesOf(t, bin, vault, "claude")
	if len(got) != 2 || !strings.Contains(fmt.Sprint(got[0]["summary"]), "What changed on staging? → The keys were rotated.") {
		t.Errorf("claude's entries: %v", got)
	}

	// The model records the turn itself (through the same server): Stop
	// adds nothing.
	s.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "session_id": "s-9", "prompt_id": "p-3", "prompt": "Record that staging is done"})
	s.rpc("tools/call", map[string]any{"name": "log_append", "arguments": map[string]any{"summary": "staging is done"}})
	s.hook(map[string]any{"hook_event_name": "Stop", "session_id": "s-9", "prompt_id": "p-3", "last_assistant_message": "Recorded."})
	if got = entriesOf(t, bin, vault, "claude"); len(got) != 3 {
		t.Errorf("after the model's own append claude's entries are %v", got)
	}

	// nexus missing: the server still answers, and the hooks say it.
	m := startHookServer(t, env, "--agent", "claude", "--vault", vault, "--bin", filepath.Join(t.TempDir(), "nexus"))
	if tools := m.rpc("tools/list", map[string]any{})["tools"].([]any); len(tools) != 0 {
		t.Errorf("a server with no nexus lists %d tools", len(tools))
	}
	up = m.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "session_id": "s-10", "prompt_id": "p-1", "prompt": "Anything new?"})
	if msg, _ := up["systemMessage"].(string); !strings.Contains(msg, "could not be used") || !strings.Contains(addedContext(up), "not found") {
		t.Errorf("with nexus missing UserPromptSubmit answered %v", up)
	}
}
