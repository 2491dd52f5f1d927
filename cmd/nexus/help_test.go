package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelpGolden pins the --help of every command in the tree, and checks
// that each has an example. A new command needs its golden file: run
// go test ./cmd/nexus -run TestHelpGolden -update.
func TestHelpGolden(t *testing.T) {
	t.Setenv("NEXUS_VAULT", "")
	t.Setenv("NEXUS_AGENT", "")
	want := map[string]bool{}
	for _, c := range commandTree() {
		args := pathArgs(c)
		name := strings.Join(append([]string{"nexus"}, args...), "_") + ".golden"
		want[name] = true
		t.Run(c.CommandPath(), func(t *testing.T) {
			code, out, errs := logCLI(t, "", append(args, "--help")...)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			if !strings.Contains(out, "Example") {
				t.Errorf("%s --help has no example: add an 'Example:' section to its Long text", c.CommandPath())
			}
			checkGolden(t, filepath.Join("testdata", "help", name), "TestHelpGolden", []byte(out))
		})
	}
	// A golden file for a command that is gone would hide nothing, but
	// would mislead: remove it.
	files, _ := filepath.Glob(filepath.Join("testdata", "help", "*.golden"))
	for _, f := range files {
		if !want[filepath.Base(f)] {
			if *update {
				os.Remove(f)
				continue
			}
			t.Errorf("%s is for a command that no longer exists: delete it (or run go test ./cmd/nexus -run TestHelpGolden -update)", f)
		}
	}
}
