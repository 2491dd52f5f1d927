package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-memory/nexus/internal/scan/scantest"
)

// cliDoor is one CLI write command and where the hostile text goes: args
// builds the command line (stdin is the text for doors reading '-').
// keeps marks log entries, decisions and checkpoints; oneLine folds the
// text onto one line for flags that must be one line.
type cliDoor struct {
	name    string
	keeps   bool
	oneLine bool
	stdin   bool
	args    func(text, pending string) []string
}

var cliWriteDoors = []cliDoor{
	{name: "memory add", args: func(t, _ string) []string { return []string{"--agent", "lyra", "memory", "add", t} }},
	{name: "memory add stdin", stdin: true, args: func(t, _ string) []string { return []string{"--agent", "lyra", "memory", "add", "-"} }},
	{name: "memory add user", args: func(t, _ string) []string { return []string{"--agent", "lyra", "memory", "add", "--target", "user", t} }},
	{name: "memory replace", args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "memory", "replace", "--old", "seed entry", t}
	}},
	{name: "fact write name", oneLine: true, args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "fact", "write", "--name", t, "--type", "project", "--description", "d", "staging first"}
	}},
	{name: "fact write description", oneLine: true, args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "fact", "write", "--name", "deploy order", "--type", "project", "--description", t, "staging first"}
	}},
	{name: "fact write source", oneLine: true, args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "fact", "write", "--name", "deploy order", "--type", "project", "--description", "d", "--source", t, "staging first"}
	}},
	{name: "fact write body", args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "fact", "write", "--name", "deploy order", "--type", "project", "--description", "d", t}
	}},
	{name: "fact write --update body", args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "fact", "write", "--update", "--name", "seed fact", "--type", "project", "--description", "d", t}
	}},
	{name: "fact write body stdin", stdin: true, args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "fact", "write", "--name", "deploy order", "--type", "project", "--description", "d", "-"}
	}},
	{name: "retain text", args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "retain", "--type", "project", "--name", "n", t}
	}},
	{name: "retain name", oneLine: true, args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "retain", "--type", "project", "--name", t, "staging first"}
	}},
	{name: "retain description", oneLine: true, args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "retain", "--type", "project", "--name", "n", "--description", t, "staging first"}
	}},
	{name: "retain source", oneLine: true, args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "retain", "--type", "project", "--name", "n", "--source", t, "staging first"}
	}},
	{name: "retain session", oneLine: true, args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "retain", "--type", "project", "--name", "n", "--session", t, "staging first"}
	}},
	{name: "review approve --text", args: func(t, id string) []string { return []string{"review", "approve", id, "--text", t} }},
	{name: "review approve --text stdin", stdin: true, args: func(t, id string) []string { return []string{"review", "approve", id, "--text", "-"} }},
	{name: "agent add --role", oneLine: true, args: func(t, _ string) []string { return []string{"agent", "add", "mira", "--role", t} }},
	{name: "log append summary", keeps: true, args: func(t, _ string) []string { return []string{"--agent", "lyra", "log", "append", t} }},
	{name: "log append summary stdin", keeps: true, stdin: true, args: func(t, _ string) []string { return []string{"--agent", "lyra", "log", "append", "-"} }},
	{name: "log append --body", keeps: true, args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "log", "append", "--body", t, "deploy status"}
	}},
	{name: "log append --body-file", keeps: true, stdin: true, args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "log", "append", "--body-file", "-", "deploy status"}
	}},
	{name: "decide title", keeps: true, args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "decide", "--decision", "staging first", t}
	}},
	{name: "decide --decision", keeps: true, args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "decide", "--decision", t, "deploy order"}
	}},
	{name: "decide --rationale", keeps: true, args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "decide", "--decision", "staging first", "--rationale", t, "deploy order"}
	}},
	{name: "checkpoint save --task", keeps: true, args: func(t, _ string) []string { return []string{"--agent", "lyra", "checkpoint", "save", "--task", t} }},
	{name: "checkpoint save --state", keeps: true, args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "checkpoint", "save", "--task", "ship", "--state", t}
	}},
	{name: "checkpoint save --next", keeps: true, args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "checkpoint", "save", "--task", "ship", "--next", t}
	}},
	{name: "checkpoint save --note", keeps: true, args: func(t, _ string) []string {
		return []string{"--agent", "lyra", "checkpoint", "save", "--task", "ship", "--note", "first note", "--note", t}
	}},
	{name: "checkpoint save --files", keeps: true, oneLine: true, args: func(t, _ string) []string {
		// --files splits on commas; none of the texts holds one.
		return []string{"--agent", "lyra", "checkpoint", "save", "--task", "ship", "--files", t}
	}},
}

// TestHostileContentThroughEveryCLIWriteCommand is the CLI half of the
// hostile-content table (mcpserver has the MCP half): every write
// command that stores text a prompt can show, with each hostile text.
// Refused (exit 1, the rule named, nothing written: every vault file's
// bytes compared, .nexus/state and .nexus/index excepted — this machine's
// locks, cursors and caches, which hold none of the text) or, for
// injection in log entries, decisions and checkpoints, kept and shown as
// "[QUARANTINED: rule]" by 'nexus prompt' of the writer and of another
// agent, 'log read', 'decisions' and 'checkpoint show'.
func TestHostileContentThroughEveryCLIWriteCommand(t *testing.T) {
	t.Setenv("NEXUS_AGENT", "")
	t.Setenv("NEXUS_REVIEWER", "ada")
	dir := logVault(t)
	cli := func(stdin string, args ...string) (int, string, string) {
		return logCLI(t, stdin, append([]string{"--vault", dir, "--json"}, args...)...)
	}
	for _, seed := range [][]string{
		{"--agent", "lyra", "memory", "add", "seed entry: staging first"},
		{"--agent", "lyra", "fact", "write", "--name", "seed fact", "--type", "project", "--description", "d", "staging first"},
	} {
		if code, _, e := cli("", seed...); code != 0 {
			t.Fatalf("%v: %s", seed, e)
		}
	}
	code, out, e := cli("", "--agent", "lyra", "retain", "--type", "project", "--name", "pending one", "a harmless proposal")
	var item struct{ ID string }
	if json.Unmarshal([]byte(out), &item); code != 0 || item.ID == "" {
		t.Fatalf("retain: %s %s", out, e)
	}
	for _, d := range cliWriteDoors {
		for _, h := range scantest.Texts {
			text := h.Text
			if d.oneLine {
				text = strings.Join(strings.Fields(text), " ")
			}
			stdin := ""
			if d.stdin {
				stdin = text
			}
			what := d.name + " / " + h.Name
			before := vaultBytes(t, dir)
			code, out, errs := cli(stdin, d.args(text, item.ID)...)
			if !(d.keeps && h.Quarantinable) {
				if code != 1 {
					t.Errorf("%s: exit %d, want 1 (refused by rule %s)\nstdout: %.300s\nstderr: %.300s", what, code, h.Rule, out, errs)
				} else if !strings.Contains(out+errs, "rule "+h.Rule) {
					t.Errorf("%s: refusal does not name rule %s: %s %s", what, h.Rule, out, errs)
				}
				if strings.Contains(out+errs, h.Marker) {
					t.Errorf("%s: the refusal repeats the hostile text: %s %s", what, out, errs)
				}
				sameVaultBytes(t, what, before, vaultBytes(t, dir))
				continue
			}
			if code != 0 {
				t.Errorf("%s: exit %d, want it kept and quarantined\nstdout: %s\nstderr: %s", what, code, out, errs)
				continue
			}
			checkCLIViewsMasked(t, cli, what, h.Marker, h.Rule)
		}
	}
	for _, h := range scantest.Texts {
		checkCLIViewsMasked(t, cli, "at the end / "+h.Name, h.Marker, "")
	}
}

// checkCLIViewsMasked checks that nothing an agent reads through the CLI
// shows marker, and that rule (if set) shows as "[QUARANTINED: rule]" in
// a session-start render.
func checkCLIViewsMasked(t *testing.T, cli func(string, ...string) (int, string, string), what, marker, rule string) {
	t.Helper()
	views := map[string][]string{
		"ella prompt":     {"--agent", "ella", "prompt"},
		"lyra prompt":     {"--agent", "lyra", "prompt"},
		"ella log read":   {"--agent", "ella", "log", "read", "--last", "100"},
		"ella decisions":  {"--agent", "ella", "decisions", "--all"},
		"lyra checkpoint": {"--agent", "lyra", "checkpoint", "show", "--history"},
	}
	prompts := ""
	for view, args := range views {
		// Both the text and the --json forms.
		for _, form := range []string{"--json=true", "--json=false"} {
			code, out, errs := cli("", append(append([]string{}, args...), form)...)
			if code != 0 && view != "lyra checkpoint" {
				t.Errorf("%s: %s: exit %d: %s", what, view, code, errs)
			}
			if strings.Contains(out+errs, marker) {
				t.Errorf("%s: %s shows the raw hostile text %q:\n%s", what, view, marker, out)
			}
			if strings.HasSuffix(view, "prompt") {
				prompts += out
			}
		}
	}
	if rule != "" && !strings.Contains(prompts, "[QUARANTINED: "+rule+"]") {
		t.Errorf("%s: no prompt shows [QUARANTINED: %s]:\n%s", what, rule, prompts)
	}
}

// vaultBytes reads every file of the vault but .nexus/state and
// .nexus/index (locks, cursors, caches: this machine's, holding no text).
func vaultBytes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".nexus/state" || rel == ".nexus/index" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameVaultBytes(t *testing.T, what string, before, after map[string]string) {
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

// cliNoPromptText are the commands that store no text of their caller's
// that a prompt shows, and why.
var cliNoPromptText = map[string]string{
	"agent list": "reads", "agent show": "reads", "agent token": "makes a token; stores its hash", "agent new-key": "makes a key; stores its public half", "agent rotate-key": "makes a key; stores its public half and a signature",
	"checkpoint show": "reads", "completion": "prints a script", "curator status": "reads",
	"curator run": "proposes moves of entries already scanned; its writes go through memory and facts",
	"decisions":   "reads", "demo": "writes its own fixed demo vault", "device name": "a name: letters, digits, '-', '_', '.'", "device restore-keys": "writes public keys this machine holds, no text",
	"doctor": "reads (and finishes interrupted work)", "fact list": "reads", "fact pin": "a slug", "fact unpin": "a slug",
	"fact read": "reads", "fact remove": "archives a fact scanned when written", "fact stats": "reads",
	"index hold": "search index cache", "index embed": "vectors of notes' text in the search index cache", "index rebuild": "search index cache", "index status": "reads", "init": "makes an empty vault",
	"journey": "prints a walk-through", "log clear": "a person's one-word name and an entry hash", "log feeds": "reads", "log trust": "pins keys IDENTITY.md lists, in machine-local state", "log timeline": "rewrites the derived timeline from entries scanned when appended, quarantined ones masked",
	"links": "reads", "log read": "reads", "log tail": "reads", "log verify": "reads", "memory remove": "removes an entry; old_text is not stored",
	"memory show": "reads", "prompt": "reads", "review list": "reads", "review show": "reads",
	"person init": "makes a key; stores its public half and a name checked to letters, digits and . _ @ -",
	"person list": "reads", "person trust": "pins a public key already in the vault",
	"review sign":   "signs decisions a person set in files already scanned when retained",
	"review reject": "archives the item; the reason stays in review/archive/, which no prompt shows",
	"rollback":      "restores a snapshot of files written (and scanned) before", "search": "reads", "snapshot list": "reads",
	"serve": "the MCP server: mcpserver's TestHostileContentThroughEveryWriteTool", "version": "reads", "watch": "keeps the index current",
}

// TestHostileDoorsCoverEveryCLIWriteCommand walks the command tree: every
// command is in cliWriteDoors or in cliNoPromptText, so a new write
// command cannot miss the hostile-content table.
func TestHostileDoorsCoverEveryCLIWriteCommand(t *testing.T) {
	paths := map[string]bool{}
	for _, c := range commandTree() {
		if c.Runnable() && !c.HasSubCommands() {
			paths[strings.Join(pathArgs(c), " ")] = true
		}
	}
	doors := map[string]bool{}
	for _, d := range cliWriteDoors {
		args := d.args("TEXT", "r-000000")
		var words []string
		for i := 0; i < len(args); i++ {
			if args[i] == "--agent" {
				i++
				continue
			}
			if strings.HasPrefix(args[i], "-") {
				break
			}
			words = append(words, args[i])
		}
		found := ""
		for n := len(words); n > 0 && found == ""; n-- {
			if p := strings.Join(words[:n], " "); paths[p] {
				found = p
			}
		}
		if found == "" {
			t.Errorf("door %s runs no command: %v", d.name, args)
		}
		doors[found] = true
	}
	for p := range paths {
		_, reason := cliNoPromptText[p]
		if !doors[p] && !reason {
			t.Errorf("command %q stores text? add it to cliWriteDoors, or to cliNoPromptText with the reason", p)
		}
		if doors[p] && reason {
			t.Errorf("command %q is in both cliWriteDoors and cliNoPromptText", p)
		}
	}
	for p := range cliNoPromptText {
		if !paths[p] {
			t.Errorf("cliNoPromptText names %q, which is not a command", p)
		}
	}
}
