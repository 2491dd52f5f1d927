package main

import (
	"encoding/json"
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

	if code, _, stderr := memCLI(t, "", "--vault", dir, "--agent", "ghost", "prompt"); code != 1 || !strings.Contains(stderr, "no such agent") {
		t.Errorf("unknown agent: %d %q", code, stderr)
	}
	if code, stdout, _ := memCLI(t, "", "prompt", "--help"); code != 0 || !strings.Contains(stdout, "Example") {
		t.Errorf("help: %d %q", code, stdout)
	}
}
