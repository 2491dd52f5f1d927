package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestTyposGetSuggestions: a mistyped command, at the top or under a
// group, is bad usage (exit 2) that names the command meant, two letters
// swapped included.
func TestTyposGetSuggestions(t *testing.T) {
	t.Setenv("NEXUS_VAULT", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"doctr"}, "did you mean doctor?"},
		{[]string{"serach", "deploy"}, "did you mean search?"},
		{[]string{"reveiw"}, "did you mean review?"},
		{[]string{"log", "raed"}, "did you mean read?"},
		{[]string{"agent", "lsit"}, "did you mean list?"},
	} {
		code, out, errs := logCLI(t, "", tc.args...)
		if code != exitUsage || out != "" || !strings.Contains(errs, tc.want) || strings.Count(errs, "did you mean") != 1 {
			t.Errorf("nexus %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), code, out, errs, tc.want)
		}
	}
}

// TestHelpTopics: 'nexus help X' prints X's help; a topic that names no
// command is bad usage, with a suggestion where there is one, not the root
// help and exit 0.
func TestHelpTopics(t *testing.T) {
	t.Setenv("NEXUS_VAULT", "")
	for _, tc := range []struct {
		args     []string
		code     int
		stdout   string // a part of it; "" for none at all
		stderr   string
		noStdout bool
	}{
		{[]string{"help"}, 0, "Available Commands:", "", false},
		{[]string{"help", "log", "read"}, 0, "nexus log read [flags]", "", false},
		{[]string{"help", "help"}, 0, "Help provides help", "", false},
		{[]string{"help", "nosuch"}, exitUsage, "", `nexus: unknown help topic "nosuch"` + "\nRun 'nexus --help' for usage.\n", true},
		{[]string{"help", "doctr"}, exitUsage, "", "did you mean doctor?", true},
		{[]string{"help", "log", "raed"}, exitUsage, "", `unknown help topic "log raed": "raed" is not a command of 'nexus log'; did you mean read?`, true},
	} {
		code, out, errs := logCLI(t, "", tc.args...)
		name := strings.Join(tc.args, " ")
		if code != tc.code || !strings.Contains(out, tc.stdout) || !strings.Contains(errs, tc.stderr) || (tc.noStdout && out != "") {
			t.Errorf("nexus %s: exit %d (want %d)\nstdout: %.300q\nstderr: %q", name, code, tc.code, out, errs)
		}
	}
}

// TestVaultFolderNamedButWrong: --vault or $NEXUS_VAULT naming a folder
// that does not exist says so, and 'nexus init' is offered only for a
// folder that exists.
func TestVaultFolderNamedButWrong(t *testing.T) {
	t.Setenv("NEXUS_VAULT", "")
	t.Setenv("NEXUS_AGENT", "")
	empty := t.TempDir()
	missing := filepath.Join(t.TempDir(), "nosuch")
	for _, tc := range []struct {
		name    string
		env     string
		args    []string
		want    string
		notWant string
	}{
		{"flag, missing", "", []string{"--vault", missing, "log", "read"}, "vault folder " + missing + " (--vault) does not exist", "init"},
		{"env, missing", missing, []string{"log", "read"}, "vault folder " + missing + " ($NEXUS_VAULT) does not exist", "init"},
		{"doctor, missing", "", []string{"--vault", missing, "doctor"}, "does not exist", "init"},
		{"flag, not a vault", "", []string{"--vault", empty, "log", "read"}, "is not a Nexus vault: it has no .nexus/ folder (to make it one: nexus init " + empty + ")", "or above"},
		{"doctor, not a vault", "", []string{"--vault", empty, "doctor"}, "not a Nexus vault", "or above"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NEXUS_VAULT", tc.env)
			code, _, errs := logCLI(t, "", tc.args...)
			if code != exitRefused || !strings.Contains(errs, tc.want) || strings.Contains(errs, tc.notWant) {
				t.Errorf("exit %d, stderr %q; want exit 1 and %q without %q", code, errs, tc.want, tc.notWant)
			}
		})
	}
}

// TestAgentFromEnvironmentFiltersLogRead: without --unread, the agent
// filters 'log read' by author whether it comes from --agent or from
// $NEXUS_AGENT (SPEC §8: the agent is --agent, else $NEXUS_AGENT); the
// environment's filter is noted on stderr, as nothing else shows it.
func TestAgentFromEnvironmentFiltersLogRead(t *testing.T) {
	t.Setenv("NEXUS_VAULT", "")
	t.Setenv("NEXUS_AGENT", "")
	dir := logVault(t)
	for _, a := range []string{"lyra", "ella", "lyra"} {
		if code, _, errs := logCLI(t, "", "--vault", dir, "--agent", a, "log", "append", "note by "+a); code != 0 {
			t.Fatalf("append: %s", errs)
		}
	}
	read := func(env string, args ...string) (readResult, string) {
		t.Helper()
		t.Setenv("NEXUS_AGENT", env)
		code, out, errs := logCLI(t, "", append([]string{"--vault", dir, "--json", "log", "read", "--last", "10"}, args...)...)
		var res readResult
		if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil {
			t.Fatalf("log read %v (NEXUS_AGENT=%q): exit %d %v\n%s%s", args, env, code, err, out, errs)
		}
		_, _, text := logCLI(t, "", append([]string{"--vault", dir, "log", "read", "--last", "10"}, args...)...)
		return res, text
	}
	byFlag, flagNote := read("", "--agent", "lyra")
	byEnv, envNote := read("lyra")
	all, _ := read("")
	fromWins, _ := read("lyra", "--from", "ella")
	if byFlag.Count != 2 || byEnv.Count != 2 || byFlag.From != "lyra" || byEnv.From != "lyra" {
		t.Errorf("--agent lyra gave %d entries (from %q), NEXUS_AGENT=lyra %d (from %q); want 2 each, from lyra", byFlag.Count, byFlag.From, byEnv.Count, byEnv.From)
	}
	if all.Count != 3 || all.From != "" || fromWins.Count != 1 || fromWins.Entries[0].Agent != "ella" {
		t.Errorf("unfiltered: %d (from %q); --from ella over NEXUS_AGENT: %d", all.Count, all.From, fromWins.Count)
	}
	if flagNote != "" || !strings.Contains(envNote, "entries by lyra only ($NEXUS_AGENT)") {
		t.Errorf("stderr with --agent %q, with NEXUS_AGENT %q", flagNote, envNote)
	}
}

// TestMessagesSayEachThingOnce: the messages that used to repeat
// themselves ("... (rotate it to replace it); pass --rotate to replace
// it", "r-1 stays pending: r-1: ... it stays pending: ...").
func TestMessagesSayEachThingOnce(t *testing.T) {
	dir := factVault(t)
	nx := func(args ...string) (int, string, string) {
		return factCLI(t, "", append([]string{"--vault", dir}, args...)...)
	}
	if code, _, errs := nx("agent", "token", "lyra"); code != 0 {
		t.Fatalf("token: %s", errs)
	}
	code, _, errs := nx("agent", "token", "lyra")
	if code != exitRefused || strings.Count(errs, "rotate") != 1 || !strings.Contains(errs, "agent lyra already has a token: pass --rotate to replace it") {
		t.Errorf("second token: exit %d, %q", code, errs)
	}

	for _, text := range []string{"Alpha fact", "Alpha fact"} {
		if code, _, errs := nx("--agent", "lyra", "retain", "--type", "project", text); code != 0 {
			t.Fatalf("retain: %s", errs)
		}
	}
	code, out, errs := nx("review", "approve", "--all")
	if code != exitRefused {
		t.Fatalf("approve --all: exit %d\n%s%s", code, out, errs)
	}
	var failed string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "stays pending") {
			failed = l
		}
	}
	id := strings.Fields(failed + " x")[0]
	if failed == "" || strings.Count(failed, "pending") != 1 || strings.Count(failed, id) != 1 || !strings.Contains(failed, "already exists") {
		t.Errorf("failed item's line: %q\n%s", failed, out)
	}
	if strings.Count(errs, "pending") != 1 || !strings.HasPrefix(errs, "nexus: 1 of 2 items could not be applied and stay pending") {
		t.Errorf("stderr: %q", errs)
	}
}

// TestSuccessDocument: every success document is an object that starts
// with "success": true and keeps the command's fields in their order; a
// list is under its name; the memory commands' own "success" stays as it is.
func TestSuccessDocument(t *testing.T) {
	type entry struct {
		Zeta  string `json:"zeta"`
		Alpha int    `json:"alpha"`
	}
	for _, tc := range []struct {
		name   string
		result any
		want   string
	}{
		{"fields keep their order", entry{"<b>", 1}, `{"success":true,"zeta":"<b>","alpha":1}`},
		{"empty object", struct{}{}, `{"success":true}`},
		{"named list", listOf("facts", []entry{{"a", 2}}), `{"success":true,"facts":[{"zeta":"a","alpha":2}]}`},
		{"empty named list", listOf[entry]("facts", nil), `{"success":true,"facts":[]}`},
		{"own success field", map[string]any{"success": true, "target": "memory"}, `{"success":true,"target":"memory"}`},
		{"not an object", []int{1, 2}, `{"success":true,"result":[1,2]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf strings.Builder
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(successDocument(tc.result)); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(buf.String()); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestEverySuccessHasOneShape: commands that used to print a bare array,
// or no "success", print an object with "success": true and their list
// under its name; a failure keeps "success": false, "error" (a string, as
// the adapters in examples/ read it) and "exit_code".
func TestEverySuccessHasOneShape(t *testing.T) {
	t.Setenv("NEXUS_VAULT", "")
	t.Setenv("NEXUS_AGENT", "")
	dir := logVault(t)
	for _, tc := range []struct {
		args []string
		list string // the field holding the list; "" for none
	}{
		{[]string{"agent", "list"}, "agents"},
		{[]string{"--agent", "lyra", "fact", "list"}, "facts"},
		{[]string{"--agent", "lyra", "fact", "stats"}, "facts"},
		{[]string{"decisions"}, "decisions"},
		{[]string{"journey"}, "events"},
		{[]string{"snapshot", "list"}, "snapshots"},
		{[]string{"--agent", "lyra", "log", "append", "hello"}, ""},
		{[]string{"--agent", "ella", "log", "read", "--unread"}, "entries"},
		{[]string{"version"}, ""},
		{nil, "commands"},
	} {
		code, out, errs := logCLI(t, "", append([]string{"--vault", dir, "--json"}, tc.args...)...)
		var doc map[string]json.RawMessage
		if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || string(doc["success"]) != "true" {
			t.Errorf("nexus --json %v: exit %d, %v, want an object with success true:\n%s%s", tc.args, code, err, out, errs)
			continue
		}
		if tc.list != "" && (len(doc[tc.list]) == 0 || doc[tc.list][0] != '[') {
			t.Errorf("nexus --json %v: no list under %q:\n%s", tc.args, tc.list, out)
		}
	}
	code, out, _ := logCLI(t, "", "--vault", dir, "--json", "--agent", "nobody", "log", "read", "--unread")
	var fail struct {
		Success  *bool  `json:"success"`
		Error    string `json:"error"`
		ExitCode int    `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(out), &fail); err != nil || code != exitRefused || fail.Success == nil || *fail.Success || fail.Error == "" || fail.ExitCode != code {
		t.Errorf("failure document: exit %d %v\n%s", code, err, out)
	}
}
