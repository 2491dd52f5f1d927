package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// update makes golden tests rewrite their files under testdata/:
// go test ./cmd/nexus -run TestHelpGolden -update
var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// checkGolden compares got with the golden file at path (under testdata/),
// or rewrites it with -update. run names the test, for the message.
func checkGolden(t *testing.T, path, run string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v\nif the command is new, create its golden file: go test ./cmd/nexus -run %s -update", err, run)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s; if the change is intended, run: go test ./cmd/nexus -run %s -update (and check the diff)\n--- got\n%s--- want\n%s", path, run, got, want)
	}
}

// commandTree returns every command a person can run or ask help for,
// root first, in a stable order: cobra's own 'help' and hidden commands
// are left out. Tables over all commands walk it, so a new command is in
// them without anyone adding it.
func commandTree() []*cobra.Command {
	var out []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		out = append(out, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	root := newRoot(&globals{})
	root.InitDefaultHelpCmd()
	walk(root)
	return out
}

// pathArgs is a command's path without "nexus", as arguments.
func pathArgs(c *cobra.Command) []string {
	return strings.Fields(strings.TrimPrefix(c.CommandPath(), "nexus"))
}
