//go:build !lite

package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDemoInvocation: the demo's closing commands and MCP config run the
// nexus a person has: "nexus" when it is on PATH, else this binary by its
// path, else (go run, nothing installed) 'go run' lines with how to
// install it and put GOPATH/bin on PATH.
func TestDemoInvocation(t *testing.T) {
	notFound := func(string) (string, error) { return "", exec.ErrNotFound }
	found := func(p string) func(string) (string, error) {
		return func(string) (string, error) { return p, nil }
	}
	same := func(a, b string) bool { return a == b }
	goBin := func() string { return "/home/u/go/bin" }
	for _, tc := range []struct {
		name       string
		env        demoEnv
		command    string
		mcpCommand string
		setup      []string // parts of the setup note; nil for no note
	}{
		{"installed, this binary", demoEnv{executable: "/home/u/go/bin/nexus", lookPath: found("/home/u/go/bin/nexus"), sameFile: same}, "nexus", "nexus", nil},
		{"go run, installed", demoEnv{executable: "/tmp/go-build123/b001/exe/nexus", lookPath: found("/usr/local/bin/nexus"), sameFile: same, inCheckout: true, goBin: goBin}, "nexus", "nexus", nil},
		{"built, not on PATH", demoEnv{executable: "/src/nexus/nexus", lookPath: notFound, sameFile: same}, "/src/nexus/nexus", "/src/nexus/nexus", []string{"not on your PATH", "put /src/nexus on your PATH"}},
		{"built, another on PATH", demoEnv{executable: "/src/nexus/nexus", lookPath: found("/usr/bin/nexus"), sameFile: same}, "/src/nexus/nexus", "/src/nexus/nexus", []string{"(/usr/bin/nexus) is another binary"}},
		{"go run in the checkout", demoEnv{executable: "/tmp/go-build123/b001/exe/nexus", lookPath: notFound, sameFile: same, inCheckout: true, goBin: goBin}, "go run ./cmd/nexus", "/home/u/go/bin/nexus",
			[]string{"go install ./cmd/nexus", "put /home/u/go/bin on your PATH", "does not add it to PATH", `export PATH="$PATH:/home/u/go/bin"`}},
		{"go run elsewhere, no go env", demoEnv{executable: "/tmp/go-build1/b001/exe/nexus", lookPath: notFound, sameFile: same, goBin: func() string { return "" }}, "go run github.com/nexus-memory/nexus/cmd/nexus", "nexus",
			[]string{"go install ./cmd/nexus", "$(go env GOPATH)/bin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := demoInvocation(tc.env)
			if got.command != tc.command || got.mcpCommand != tc.mcpCommand || (tc.setup == nil) != (got.setup == "") {
				t.Errorf("got %+v, want command %q, MCP command %q, a note: %v", got, tc.command, tc.mcpCommand, tc.setup != nil)
			}
			for _, want := range tc.setup {
				if !strings.Contains(got.setup, want) {
					t.Errorf("setup note lacks %q:\n%s", want, got.setup)
				}
			}
		})
	}
}
