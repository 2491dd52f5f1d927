package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNotATerminal: output sent to /dev/null (cron, scripts: >/dev/null
// 2>&1), a pipe or a file is not a terminal, so no background holder is
// started and no progress bar drawn for it.
func TestNotATerminal(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, f := range map[string]*os.File{"/dev/null": null, "pipe": pw, "file": file} {
		if isTerminal(f) || isTerminal(&syncWriter{w: f}) {
			t.Errorf("%s taken for a terminal", name)
		}
	}
	for name, f := range map[string]*os.File{"/dev/null": null, "pipe": pr, "file": file} {
		if isTerminalReader(f) {
			t.Errorf("%s taken for a terminal to read", name)
		}
	}
}

// TestRedrawOnlyOnCapableTerminals: TERM=dumb and NO_COLOR get plain
// lines, as a pipe does; only a terminal without them gets a bar redrawn
// with carriage returns and escape codes.
func TestRedrawOnlyOnCapableTerminals(t *testing.T) {
	for _, tc := range []struct {
		tty  bool
		env  map[string]string
		want bool
	}{
		{true, map[string]string{"TERM": "xterm-256color"}, true},
		{true, map[string]string{}, true},
		{true, map[string]string{"TERM": "dumb"}, false},
		{true, map[string]string{"TERM": "xterm", "NO_COLOR": "1"}, false},
		{false, map[string]string{"TERM": "xterm"}, false},
	} {
		if got := redraws(tc.tty, func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("terminal %v, env %v: redraws %v, want %v", tc.tty, tc.env, got, tc.want)
		}
	}
}
