package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemoCommand runs 'nexus demo' end to end, as the README's first
// command does, and checks the vault it leaves with the CLI: doctor and log
// verify pass; the approved fact, the superseding decision and the resumed
// checkpoint are there.
func TestDemoCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	code, stdout, stderr := doctorCLI(t, "demo", "--dir", dir, "--appends", "100")
	if code != 0 {
		t.Fatalf("nexus demo: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"Scene 6", "obsidian://open?path=", dir, `"NEXUS_VAULT"`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if strings.Contains(stdout, "delete it") {
		t.Error("a --dir vault is not a temp folder; the demo must not suggest deleting it")
	}

	if code, out, errOut := doctorCLI(t, "--vault", dir, "doctor"); code != 0 {
		t.Errorf("doctor on the demo vault: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := doctorCLI(t, "--vault", dir, "--json", "log", "verify")
	var verify struct {
		OK      bool `json:"ok"`
		Entries int  `json:"entries"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &verify) != nil || !verify.OK {
		t.Fatalf("log verify: exit %d %s %s", code, out, errOut)
	}
	// handoff + reply + 2x100 appends + 3 decisions
	if verify.Entries != 205 {
		t.Errorf("log verify checked %d entries, want 205", verify.Entries)
	}

	_, out, _ = doctorCLI(t, "--vault", dir, "--agent", "ella", "--json", "fact", "list")
	if !strings.Contains(out, `"path": "agents/ella/memory/prefers-korean-first.md"`) || !strings.Contains(out, "review:") {
		t.Errorf("approved fact missing from ella's facts:\n%s", out)
	}
	_, out, _ = doctorCLI(t, "--vault", dir, "--json", "decisions", "--all")
	var ds []struct {
		ID           string `json:"id"`
		Supersedes   string `json:"supersedes"`
		SupersededBy string `json:"superseded_by"`
	}
	if err := json.Unmarshal([]byte(out), &ds); err != nil {
		t.Fatalf("decisions --json: %v\n%s", err, out)
	}
	found := false
	for _, d := range ds {
		if d.ID == "lyra@demo:D-0002" && d.Supersedes == "lyra@demo:D-0001" {
			found = true
		}
		if d.ID == "lyra@demo:D-0001" && d.SupersededBy != "lyra@demo:D-0002" {
			t.Errorf("lyra@demo:D-0001 superseded_by %q, want lyra@demo:D-0002", d.SupersededBy)
		}
	}
	if !found {
		t.Errorf("no decision lyra@demo:D-0002 superseding lyra@demo:D-0001:\n%s", out)
	}
	_, out, _ = doctorCLI(t, "--vault", dir, "--agent", "lyra", "--json", "checkpoint", "show")
	if !strings.Contains(out, "resumed at step 7") {
		t.Errorf("lyra's checkpoint is not the resumed one:\n%s", out)
	}

	// The folder is not empty now: a second demo there is refused (exit 2).
	if code, _, errOut := doctorCLI(t, "demo", "--dir", dir); code != exitUsage || !strings.Contains(errOut, "new or empty") {
		t.Errorf("demo into a used folder: exit %d, %q", code, errOut)
	}
}

// TestDemoTempVault: without --dir the vault goes under the temp dir and is
// kept (and the output says how to delete it) unless --keep=false.
func TestDemoTempVault(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the demo twice")
	}
	tmp := t.TempDir()
	for _, k := range []string{"TMPDIR", "TMP", "TEMP"} { // os.TempDir on Unix and Windows
		t.Setenv(k, tmp)
	}
	code, out, errOut := doctorCLI(t, "--json", "demo", "--appends", "2")
	var res struct {
		Vault   string `json:"vault"`
		Temp    bool   `json:"temp"`
		Healthy bool   `json:"healthy"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("demo --json: exit %d\n%s\n%s", code, out, errOut)
	}
	if !res.Temp || !res.Healthy {
		t.Errorf("result %+v", res)
	}
	if _, err := os.Stat(filepath.Join(res.Vault, ".nexus")); err != nil {
		t.Errorf("the temp vault was not kept: %v", err)
	}

	code, out, errOut = doctorCLI(t, "demo", "--keep=false", "--appends", "2")
	if code != 0 || !strings.Contains(out, "it is removed now") || strings.Contains(out, "stays until you delete it") {
		t.Fatalf("demo --keep=false: exit %d\n%s\n%s", code, out, errOut)
	}
	// No commands, Obsidian link or MCP config for the vault it deleted.
	for _, gone := range []string{"--vault", "obsidian://", "mcpServers", "NEXUS_VAULT"} {
		if strings.Contains(out, gone) {
			t.Errorf("demo --keep=false prints %q for the vault it removed:\n%s", gone, out)
		}
	}
	entries, _ := os.ReadDir(tmp)
	if len(entries) != 1 { // only the first, kept vault
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("temp dir holds %v, want only the kept vault", names)
	}
}

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
