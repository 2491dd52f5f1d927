package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nexus-memory/nexus/internal/scan/scantest"
	"github.com/nexus-memory/nexus/vault"
)

// writeDoor is one way text gets written over MCP: a tool and the field
// the hostile text goes into. keeps is true where SPEC §2 keeps
// quarantinable text (log entries, decisions, checkpoints); oneLine marks
// fields that must be one line (the text is folded onto one line so the
// door is tested by the scan, not by its line rule).
type writeDoor struct {
	name, tool string
	keeps      bool
	oneLine    bool
	args       func(text string) map[string]any
}

func factArgs(field string) func(string) map[string]any {
	return func(text string) map[string]any {
		a := map[string]any{"name": "deploy order", "description": "how we deploy", "type": "project", "body": "staging first, then production"}
		a[field] = text
		return a
	}
}

func checkpointArgs(field string) func(string) map[string]any {
	return func(text string) map[string]any {
		a := map[string]any{"task": "ship the gateway", "state": "tests pass", "next": "deploy", "notes": "none"}
		if field == "files" {
			a["files"] = []string{"cmd/gateway/main.go", text}
		} else {
			a[field] = text
		}
		return a
	}
}

// mcpWriteDoors is every MCP tool argument whose text is stored where a
// prompt can show it. TestHostileDoorsCoverEveryWriteTool keeps it
// complete.
var mcpWriteDoors = []writeDoor{
	{name: "memory add", tool: "memory", args: func(t string) map[string]any { return map[string]any{"action": "add", "content": t} }},
	{name: "memory add user", tool: "memory", args: func(t string) map[string]any { return map[string]any{"action": "add", "target": "user", "content": t} }},
	{name: "memory replace", tool: "memory", args: func(t string) map[string]any {
		return map[string]any{"action": "replace", "old_text": "seed entry", "content": t}
	}},
	{name: "memory operations", tool: "memory", args: func(t string) map[string]any {
		return map[string]any{"operations": []any{map[string]any{"action": "add", "content": "a harmless note"}, map[string]any{"action": "add", "content": t}}}
	}},
	{name: "fact_write name", tool: "fact_write", oneLine: true, args: factArgs("name")},
	{name: "fact_write description", tool: "fact_write", oneLine: true, args: factArgs("description")},
	{name: "fact_write source", tool: "fact_write", oneLine: true, args: factArgs("source")},
	{name: "fact_write body", tool: "fact_write", args: factArgs("body")},
	{name: "retain name", tool: "retain", oneLine: true, args: factArgs("name")},
	{name: "retain description", tool: "retain", oneLine: true, args: factArgs("description")},
	{name: "retain source", tool: "retain", oneLine: true, args: factArgs("source")},
	{name: "retain body", tool: "retain", args: factArgs("body")},
	{name: "retain facts batch", tool: "retain", args: func(t string) map[string]any {
		return map[string]any{"facts": []any{factArgs("body")("harmless"), factArgs("body")(t)}}
	}},
	{name: "log_append summary", tool: "log_append", keeps: true, args: func(t string) map[string]any { return map[string]any{"summary": t} }},
	{name: "log_append body", tool: "log_append", keeps: true, args: func(t string) map[string]any { return map[string]any{"summary": "deploy status", "body": t} }},
	{name: "decision_record title", tool: "decision_record", keeps: true, args: func(t string) map[string]any { return map[string]any{"title": t, "decision": "staging first"} }},
	{name: "decision_record decision", tool: "decision_record", keeps: true, args: func(t string) map[string]any { return map[string]any{"title": "deploy order", "decision": t} }},
	{name: "decision_record rationale", tool: "decision_record", keeps: true, args: func(t string) map[string]any {
		return map[string]any{"title": "deploy order", "decision": "staging first", "rationale": t}
	}},
	{name: "checkpoint_save task", tool: "checkpoint_save", keeps: true, args: checkpointArgs("task")},
	{name: "checkpoint_save state", tool: "checkpoint_save", keeps: true, args: checkpointArgs("state")},
	{name: "checkpoint_save next", tool: "checkpoint_save", keeps: true, args: checkpointArgs("next")},
	{name: "checkpoint_save notes", tool: "checkpoint_save", keeps: true, args: checkpointArgs("notes")},
	{name: "checkpoint_save files", tool: "checkpoint_save", keeps: true, oneLine: true, args: checkpointArgs("files")},
}

// readOnlyTools store nothing a prompt shows (fact_remove archives a
// fact whose text was scanned when it was written; log_read's ack moves a
// cursor).
var readOnlyTools = map[string]bool{"fact_read": true, "fact_remove": true, "memory_search": true, "memory_get": true,
	"memory_links": true, "log_read": true, "decision_list": true, "checkpoint_load": true}

// TestHostileDoorsCoverEveryWriteTool fails when a tool is added that
// writes but has no door in the table.
func TestHostileDoorsCoverEveryWriteTool(t *testing.T) {
	v := mustVault(t, "lyra")
	cs := connectStdio(t, v, "lyra", nil)
	ts, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	doors := map[string]bool{}
	for _, d := range mcpWriteDoors {
		doors[d.tool] = true
	}
	for _, tool := range ts.Tools {
		if !readOnlyTools[tool.Name] && !doors[tool.Name] {
			t.Errorf("tool %s writes but has no door in mcpWriteDoors", tool.Name)
		}
		if tool.Annotations != nil && tool.Annotations.ReadOnlyHint && doors[tool.Name] {
			t.Errorf("tool %s is read-only but has a door", tool.Name)
		}
	}
}

// TestHostileContentThroughEveryWriteTool sends each hostile text through
// every write door over MCP (the official Go SDK client, HTTP). SPEC §2:
// secrets, exfiltration and invisible characters are refused everywhere;
// injection and role-hijack phrasing is refused in memory, facts and
// review items and kept but quarantined in log entries, decisions and
// checkpoints. A refusal names the rule and writes nothing (every vault
// file's bytes compared, .nexus/state and .nexus/index excepted: machine
// caches, cursors and locks that hold no text). After every write that
// lands, a fresh session_start of the writer and of another agent, the
// other agent's log_read and decision_list and the writer's
// checkpoint_load show "[QUARANTINED: rule]", never the text.
func TestHostileContentThroughEveryWriteTool(t *testing.T) {
	for _, staged := range []bool{false, true} {
		name := "direct"
		if staged {
			name = "write approval"
		}
		t.Run(name, func(t *testing.T) { runHostileDoors(t, staged) })
	}
}

func runHostileDoors(t *testing.T, staged bool) {
	v := mustVault(t, "lyra", "ella")
	_, url, tokens := startServer(t, v, "lyra", "ella")
	lyra := connectHTTP(t, url, tokens["lyra"], "", nil)
	mustOK(t, lyra, "memory", map[string]any{"action": "add", "content": "seed entry: staging first"})
	if staged {
		if err := v.UpdateConfig(func(c *vault.Config) error { c.Review.WriteApproval = true; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range mcpWriteDoors {
		if staged && d.tool != "memory" {
			continue // the review gate changes only the memory tool
		}
		for _, h := range scantest.Texts {
			text := h.Text
			if d.oneLine {
				text = strings.Join(strings.Fields(text), " ")
			}
			before := snapshotTree(t, v)
			res := callTool(t, lyra, d.tool, d.args(text))
			all := strings.Join(texts(res), "\n")
			if strings.Contains(all, h.Marker) && !(d.keeps && h.Quarantinable) {
				t.Errorf("%s / %s: the result repeats the hostile text: %s", d.name, h.Name, all)
			}
			if !(d.keeps && h.Quarantinable) {
				if !res.IsError {
					t.Errorf("%s / %s: accepted, want a refusal by rule %s: %.300s", d.name, h.Name, h.Rule, all)
				} else if !strings.Contains(all, "rule "+h.Rule) {
					t.Errorf("%s / %s: refusal does not name rule %s: %s", d.name, h.Name, h.Rule, all)
				}
				sameTreeNamed(t, d.name+" / "+h.Name, before, snapshotTree(t, v))
				continue
			}
			if res.IsError {
				t.Errorf("%s / %s: refused, want it kept and quarantined: %s", d.name, h.Name, all)
				continue
			}
			var sc map[string]any
			b, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(b, &sc)
			if q := quarantineOf(sc); q != h.Rule {
				t.Errorf("%s / %s: result quarantine = %q, want %q: %s", d.name, h.Name, q, h.Rule, b)
			}
			checkPromptsMasked(t, url, tokens, d.name+" / "+h.Name, h)
		}
	}
	// Every refused text is absent from every prompt too.
	for _, h := range scantest.Texts {
		checkPromptsMasked(t, url, tokens, "at the end / "+h.Name, scantest.Hostile{Name: h.Name, Marker: h.Marker})
	}
}

// quarantineOf finds the quarantine rule in a write tool's structured
// result: log_append's entry, a decision, a checkpoint.
func quarantineOf(sc map[string]any) string {
	if e, ok := sc["entry"].(map[string]any); ok {
		sc = e
	}
	q, _ := sc["quarantine"].(string)
	return q
}

// checkPromptsMasked opens fresh sessions of the writer and of another
// agent and checks that nothing an agent reads shows h's text, and that
// a quarantinable h shows as "[QUARANTINED: rule]" where it was written.
func checkPromptsMasked(t *testing.T, url string, tokens map[string]string, what string, h scantest.Hostile) {
	t.Helper()
	ella := connectHTTP(t, url, tokens["ella"], "", nil)
	lyra := connectHTTP(t, url, tokens["lyra"], "", nil)
	views := map[string]string{
		"ella session_start": promptText(t, ella),
		"lyra session_start": promptText(t, lyra),
		"ella log_read":      strings.Join(texts(callTool(t, ella, "log_read", map[string]any{"last": 100})), "\n"),
		"ella decision_list": strings.Join(texts(callTool(t, ella, "decision_list", map[string]any{"all": true})), "\n"),
		"lyra checkpoint":    strings.Join(texts(callTool(t, lyra, "checkpoint_load", nil)), "\n"),
	}
	for view, text := range views {
		if strings.Contains(text, h.Marker) {
			t.Errorf("%s: %s shows the raw hostile text %q:\n%s", what, view, h.Marker, text)
		}
	}
	if h.Rule != "" && !strings.Contains(views["ella session_start"]+views["lyra session_start"], "[QUARANTINED: "+h.Rule+"]") {
		t.Errorf("%s: no session_start shows [QUARANTINED: %s]:\n%s", what, h.Rule, views["ella session_start"]+views["lyra session_start"])
	}
	ella.Close()
	lyra.Close()
}

func sameTreeNamed(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for k, v := range after {
		if b, ok := before[k]; !ok {
			t.Errorf("%s: file %s was created", what, k)
		} else if b != v {
			t.Errorf("%s: file %s changed", what, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			t.Errorf("%s: file %s was removed", what, k)
		}
	}
}
