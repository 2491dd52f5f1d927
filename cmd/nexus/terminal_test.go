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
