package main

import (
	"encoding/json"
	"os"
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
	var doc struct {
		Decisions []struct {
			ID           string `json:"id"`
			Supersedes   string `json:"supersedes"`
			SupersededBy string `json:"superseded_by"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("decisions --json: %v\n%s", err, out)
	}
	found := false
	for _, d := range doc.Decisions {
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
