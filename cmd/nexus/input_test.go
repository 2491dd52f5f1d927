package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTextArgumentsOneRule: every command that takes text joins its words
// with single spaces, as if they had been quoted, and reads stdin for a
// lone "-".
func TestTextArgumentsOneRule(t *testing.T) {
	dir := logVault(t)
	nx := func(stdin string, args ...string) string {
		t.Helper()
		code, out, errs := logCLI(t, stdin, append([]string{"--vault", dir, "--agent", "lyra", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errs)
		}
		return out
	}
	field := func(out string, path ...string) string {
		t.Helper()
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		for _, p := range path {
			v = v.(map[string]any)[p]
		}
		s, _ := v.(string)
		return s
	}
	for _, tt := range []struct {
		name  string
		words []string // the command before its text
		get   []string // where the text is in --json
	}{
		{"log append", []string{"log", "append"}, []string{"entry", "summary"}},
		{"decide", []string{"decide", "--decision", "d"}, []string{"title"}},
		{"retain", []string{"retain", "--type", "user", "--name", "n"}, []string{"body"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			joined := field(nx("", append(tt.words, "배포", "is", "done")...), tt.get...)
			quoted := field(nx("", append(tt.words, "배포 is done 2")...), tt.get...)
			stdin := field(nx("배포 is done 3", append(tt.words, "-")...), tt.get...)
			if joined != "배포 is done" || quoted != "배포 is done 2" || stdin != "배포 is done 3" {
				t.Errorf("joined %q, quoted %q, stdin %q", joined, quoted, stdin)
			}
		})
	}
}

// TestStdinTooLargeReportsItsSize: text on stdin over a limit is refused
// with its real size, not the size of what was read.
func TestStdinTooLargeReportsItsSize(t *testing.T) {
	dir := logVault(t)
	code, _, errs := logCLI(t, strings.Repeat("a", 5<<20), "--vault", dir, "--agent", "ella", "retain", "--type", "user", "-")
	if code != exitRefused || !strings.Contains(errs, "is 5242880 bytes, more than the 32768 allowed") {
		t.Errorf("retain - with 5 MiB: exit %d %q", code, errs)
	}
	code, _, errs = logCLI(t, strings.Repeat("a", maxStdin+1), "--vault", dir, "--agent", "lyra", "memory", "add", "-")
	if code != exitRefused || !strings.Contains(errs, "over 16.0 MiB") {
		t.Errorf("memory add - with over 16 MiB: exit %d %q", code, errs)
	}
}
