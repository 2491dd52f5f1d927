package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestPromptCLI(t *testing.T) {
	dir := memCLIVault(t)
	for _, args := range [][]string{
		{"memory", "add", "entry one"},
		{"memory", "add", "entry two"},
		{"memory", "add", "--target", "user", "User prefers concise answers"},
	} {
		if code, _, stderr := memCLI(t, "", append([]string{"--vault", dir, "--agent", "lyra"}, args...)...); code != 0 {
			t.Fatalf("%v: %s", args, stderr)
		}
	}
	rule := strings.Repeat("═", 46)
	code, stdout, stderr := memCLI(t, "", "--vault", dir, "--agent", "lyra", "prompt")
	if code != 0 {
		t.Fatalf("prompt: %d %s", code, stderr)
	}
	for _, want := range []string{
		rule + "\nIDENTITY (who you are: agents/lyra/IDENTITY.md)\n" + rule + "\n# lyra\n",
		"deploys and operates services",
		rule + "\nMEMORY (your personal notes) [0% — 21/2,200 chars]\n" + rule + "\nentry one\n§\nentry two\n",
		rule + "\nUSER PROFILE (who the user is) [2% — 28/1,375 chars]\n" + rule + "\nUser prefers concise answers\n",
		"Unread log entries",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("prompt lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "public_key") {
		t.Errorf("prompt shows frontmatter")
	}
	if strings.Index(stdout, "IDENTITY (") > strings.Index(stdout, "MEMORY (") || strings.Index(stdout, "MEMORY (") > strings.Index(stdout, "USER PROFILE") {
		t.Errorf("blocks out of order:\n%s", stdout)
	}

	code, only, _ := memCLI(t, "", "--vault", dir, "--agent", "lyra", "prompt", "--memory-only")
	if code != 0 || !strings.HasSuffix(only, "User prefers concise answers\n") {
		t.Errorf("--memory-only: %d %q", code, only)
	}

	code, js, _ := memCLI(t, "", "--vault", dir, "--agent", "lyra", "--json", "prompt")
	var res struct{ Agent, Prompt string }
	if err := json.Unmarshal([]byte(js), &res); err != nil || code != 0 || res.Agent != "lyra" || res.Prompt != stdout {
		t.Errorf("--json prompt: %d %v %+v", code, err, res)
	}

	if code, _, stderr := memCLI(t, "", "--vault", dir, "--agent", "ghost", "prompt"); code != 1 || !strings.Contains(stderr, `no agent named "ghost" in this vault (agents: lyra); to add it: nexus agent add ghost`) {
		t.Errorf("unknown agent: %d %q", code, stderr)
	}
	if code, stdout, _ := memCLI(t, "", "prompt", "--help"); code != 0 || !strings.Contains(stdout, "Example") {
		t.Errorf("help: %d %q", code, stdout)
	}
}

// TestPromptSectionsCLI: --json has one field per section rendered,
// --without leaves MEMORY/USER out, --only unread --ack acknowledges exactly
// the entries it showed, and bad flags are usage errors.
func TestPromptSectionsCLI(t *testing.T) {
	dir := memCLIVault(t)
	run := func(wantCode int, args ...string) string {
		t.Helper()
		code, stdout, stderr := memCLI(t, "", append([]string{"--vault", dir}, args...)...)
		if code != wantCode {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, wantCode, stdout, stderr)
		}
		return stdout + stderr
	}
	run(0, "agent", "add", "ella")
	run(0, "--agent", "lyra", "memory", "add", "lyra's MEMORY entry")
	run(0, "--agent", "lyra", "memory", "add", "--target", "user", "lyra's USER entry")
	for i := 1; i <= 3; i++ {
		run(0, "--agent", "ella", "log", "append", fmt.Sprintf("ella says %d", i))
	}

	var all map[string]any
	if err := json.Unmarshal([]byte(run(0, "--agent", "lyra", "--json", "prompt")), &all); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"identity", "memory", "user", "memory_index", "unread", "checkpoint", "decisions"} {
		text, ok := all[name].(string)
		if !ok {
			t.Errorf("--json has no %q string field", name)
		}
		if !strings.Contains(all["prompt"].(string), text) {
			t.Errorf("%q is not part of the prompt", name)
		}
	}
	if !strings.Contains(all["memory"].(string), "lyra's MEMORY entry") || all["unread_total"] != 3.0 || all["acked"] != false {
		t.Errorf("--json prompt: %v", all)
	}

	without := run(0, "--agent", "lyra", "prompt", "--without", "memory,user")
	if strings.Contains(without, "lyra's MEMORY entry") || strings.Contains(without, "lyra's USER entry") || !strings.Contains(without, "IDENTITY (") || !strings.Contains(without, "ella says 3") {
		t.Errorf("--without memory,user:\n%s", without)
	}
	var w map[string]any
	json.Unmarshal([]byte(run(0, "--agent", "lyra", "--json", "prompt", "--without", "memory,user")), &w)
	if _, ok := w["memory"]; ok {
		t.Errorf("a section left out has a field: %v", w)
	}

	var first struct {
		Prompt        string `json:"prompt"`
		Acked         bool   `json:"acked"`
		Total         int    `json:"unread_total"`
		Shown         int    `json:"unread_shown"`
		More          int    `json:"unread_more"`
		UnreadEntries []struct {
			Agent, Summary string
		} `json:"unread_entries"`
	}
	if err := json.Unmarshal([]byte(run(0, "--agent", "lyra", "--json", "prompt", "--only", "unread", "--ack", "--max-entries", "2")), &first); err != nil {
		t.Fatal(err)
	}
	if !first.Acked || first.Total != 3 || first.Shown != 2 || first.More != 1 || len(first.UnreadEntries) != 2 || first.UnreadEntries[1].Summary != "ella says 2" || strings.Contains(first.Prompt, "ella says 3") {
		t.Errorf("--only unread --ack --max-entries 2: %+v", first)
	}
	// Exactly the two shown were acknowledged: the third is still unread.
	if rest := run(0, "--agent", "lyra", "log", "read", "--unread"); !strings.Contains(rest, "ella says 3") || strings.Contains(rest, "ella says 2") {
		t.Errorf("after acknowledging two, unread is:\n%s", rest)
	}

	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--only", "unread", "--without", "memory"}, "not both"},
		{[]string{"--memory-only", "--only", "unread"}, "not both"},
		{[]string{"--only", "memroy"}, `"memroy"`},
		{[]string{"--only", "memory", "--ack"}, "--ack"},
		{[]string{"--without", "unread", "--ack"}, "--ack"},
		{[]string{"--max-entries", "-1"}, "--max-entries"},
	} {
		if out := run(2, append([]string{"--agent", "lyra", "prompt"}, tc.args...)...); !strings.Contains(out, tc.msg) {
			t.Errorf("%v: %q lacks %q", tc.args, out, tc.msg)
		}
	}
	// The refused --ack acknowledged nothing.
	if rest := run(0, "--agent", "lyra", "log", "read", "--unread"); !strings.Contains(rest, "ella says 3") {
		t.Errorf("a refused call acknowledged:\n%s", rest)
	}
}
