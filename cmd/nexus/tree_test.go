package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestCommandNames checks each registered name against the command its
// function builds: a run builds only the command its name says.
func TestCommandNames(t *testing.T) {
	seen := map[string]bool{}
	for _, sc := range subcommands {
		if got := sc.new(&globals{}).Name(); got != sc.name {
			t.Errorf("registered as %q, builds %q", sc.name, got)
		}
		if seen[sc.name] {
			t.Errorf("%q registered twice", sc.name)
		}
		seen[sc.name] = true
	}
}

func TestTopCommand(t *testing.T) {
	tests := []struct {
		args []string
		only string
		lean bool
	}{
		{[]string{"--version"}, "", true},
		{[]string{"--json", "--version"}, "", true},
		{[]string{"--version", "--json"}, "", true},
		{[]string{"log", "append", "hi"}, "log", true},
		{[]string{"--vault", "v", "--agent", "lyra", "prompt", "--only", "unread"}, "prompt", true},
		{[]string{"--vault=v", "--agent=log", "--json", "log", "read"}, "log", true},
		{[]string{"--agent", "log", "prompt"}, "prompt", true}, // a flag's value is no command
		{[]string{"search", "x"}, "search", true},              // a command, or the lean build's stand-in
		{[]string{"log", "--help"}, "log", true},
		{nil, "", false},                               // root help lists every command
		{[]string{"--json"}, "", false},                // so does its --json
		{[]string{"--help"}, "", false},                // and --help
		{[]string{"help", "log"}, "", false},           // help finds its topic in the tree
		{[]string{"completion", "bash"}, "", false},    // the script covers the tree
		{[]string{"lgo", "read"}, "", false},           // suggestions need every name
		{[]string{"--version", "log"}, "", false},      // whatever cobra makes of it
		{[]string{"-h", "log"}, "", false},             // a flag before the command
		{[]string{"--vault"}, "", false},               // its value missing
		{[]string{"__complete", "log", ""}, "", false}, // shell completion
	}
	for _, tt := range tests {
		only, lean := topCommand(tt.args)
		if only != tt.only || lean != tt.lean {
			t.Errorf("topCommand(%q) = %q, %v; want %q, %v", tt.args, only, lean, tt.only, tt.lean)
		}
	}
}

// TestLeanTreeRunsAsWhole runs command lines with only the command they
// name built and with the whole tree: output and exit code must be the
// same. (The help goldens run every command's --help through the lean
// tree too.)
func TestLeanTreeRunsAsWhole(t *testing.T) {
	t.Setenv("NEXUS_VAULT", "")
	t.Setenv("NEXUS_AGENT", "")
	v := logVault(t)
	whole := func([]string) (string, bool) { return "", false }
	for _, tc := range []struct {
		args []string
		// writes: the two runs write an entry or move a cursor each, so
		// their outputs differ in ids and times; exit codes and stderr are
		// compared.
		writes bool
	}{
		{[]string{"--version"}, false},
		{[]string{"--json", "--version"}, false},
		{[]string{"--vault", v, "--agent", "lyra", "log", "append", "checked the deploy"}, true},
		{[]string{"--vault", v, "--agent", "ella", "log", "read", "--unread"}, false},
		{[]string{"--vault", v, "--agent", "ella", "--json", "prompt", "--only", "unread", "--ack"}, true},
		{[]string{"--vault", v, "log", "append"}, false},                   // no summary: usage error
		{[]string{"--vault", v, "--agent", "lyra", "log", "raed"}, false},  // a typo of a subcommand
		{[]string{"--vault", v, "--agent", "lyra", "prompt", "-x"}, false}, // an unknown flag
		{[]string{"--vault", v, "--agent", "nobody", "log", "read"}, false},
		{[]string{"--json", "log"}, false}, // a group without its command
		{[]string{"log", "append", "--help"}, false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errs [2]bytes.Buffer
			var code [2]int
			for i, pick := range []func([]string) (string, bool){topCommand, whole} {
				code[i] = runTree(context.Background(), tc.args, strings.NewReader(""), &out[i], &errs[i], pick)
			}
			if code[0] != code[1] || !tc.writes && out[0].String() != out[1].String() || errs[0].String() != errs[1].String() {
				t.Errorf("command alone: exit %d, stdout %q, stderr %q\nwhole tree:   exit %d, stdout %q, stderr %q",
					code[0], out[0].String(), errs[0].String(), code[1], out[1].String(), errs[1].String())
			}
		})
	}
}
