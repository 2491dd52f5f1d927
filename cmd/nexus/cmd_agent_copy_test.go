//go:build !lite && !windows

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentAddOnACopyRefuses: 'agent add' in a vault folder copied whole
// from another machine would list the new agent's key under that
// machine's device name (SPEC §4: a device is a machine). Like an append,
// it refuses, writes nothing (no IDENTITY.md, no key) and asks for a
// device name; after 'device name' the key is listed under the copy's own.
// A name another machine claimed is refused the same way.
func TestAgentAddOnACopyRefuses(t *testing.T) {
	t.Setenv("NEXUS_AGENT", "")
	t.Setenv("NEXUS_VAULT", "")
	a := t.TempDir() + "/a"
	mustCLI(t, "init", a)
	mustCLI(t, "--vault", a, "device", "name", "laptop")
	mustCLI(t, "--vault", a, "agent", "add", "lyra")
	mustCLI(t, "--vault", a, "--agent", "lyra", "log", "append", "written on the laptop") // claims laptop
	b := t.TempDir() + "/b"
	cpA(t, a, b)

	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{name: "copied folder", want: "copied from another machine"},
		{
			// This machine never wrote (no machine record) and took the
			// name another machine claimed: 'device name' refuses the name,
			// so set it the way an older Nexus or a person would.
			name: "name another machine claimed",
			setup: func(t *testing.T, dir string) {
				if err := os.RemoveAll(filepath.Join(dir, ".nexus", "state")); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Join(dir, ".nexus", "state"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, ".nexus", "state", "device"), []byte("laptop\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want: "belongs to another machine",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "v")
			cpA(t, b, dir)
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			before := treeDigest(t, dir)
			code, out, errs := logCLI(t, "", "--vault", dir, "agent", "add", "ella")
			if code != exitRefused || !strings.Contains(errs, tc.want) || !strings.Contains(errs, "nexus device name NAME") {
				t.Fatalf("agent add: exit %d\n%s%s", code, out, errs)
			}
			if after := treeDigest(t, dir); after != before {
				t.Fatalf("a refused agent add wrote:\nbefore\n%s\nafter\n%s", before, after)
			}
			mustCLI(t, "--vault", dir, "device", "name", "desk")
			mustCLI(t, "--vault", dir, "agent", "add", "ella")
			id, err := os.ReadFile(filepath.Join(dir, "agents", "ella", "IDENTITY.md"))
			if err != nil || !strings.Contains(string(id), "- desk ed25519:") || strings.Contains(string(id), "- laptop ") {
				t.Fatalf("ella's IDENTITY.md after 'device name desk': %v\n%s", err, id)
			}
			mustCLI(t, "--vault", dir, "--agent", "ella", "log", "append", "ella on the desk")
		})
	}
}
