package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// treeOf lists every path under dir, outside .nexus/, in slash form.
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if rel == ".nexus" {
			out = append(out, rel)
			return filepath.SkipDir
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestInitOnObsidianVault: init on a folder of notes adds .nexus/ and the
// ignore rules and nothing else; no reading command makes a folder either,
// doctor calls the fresh vault healthy, and the folders of the layout
// appear with the first write into them.
func TestInitOnObsidianVault(t *testing.T) {
	t.Setenv("NEXUS_VAULT", "")
	t.Setenv("NEXUS_AGENT", "")
	t.Setenv("NEXUS_SEARCH_HOLD", "0")
	dir := t.TempDir()
	for rel, body := range map[string]string{
		"Welcome.md":             "# Welcome\n",
		"Daily/2026-12-01.md":    "# 오늘\n\n배포 준비\n",
		".obsidian/app.json":     "{}",
		".obsidian/plugins/x.js": "//",
	} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := treeOf(t, dir)

	code, out, errs := logCLI(t, "", "--json", "init", dir)
	if code != 0 {
		t.Fatalf("init: %d %s", code, errs)
	}
	var res struct {
		Created     []string `json:"created"`
		IgnoreRules []string `json:"ignore_rules"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Created, ",") != ".nexus/" {
		t.Errorf("init reports created %v, want .nexus/ alone", res.Created)
	}
	want := append(slices.Clone(before), ".gitignore", ".nexus", ".stignore")
	slices.Sort(want)
	if got := treeOf(t, dir); !slices.Equal(got, want) {
		t.Fatalf("after init the vault holds\n%v\nwant\n%v", got, want)
	}

	// Reading a fresh vault is no reason to make folders, and nothing in it
	// is broken.
	for _, args := range [][]string{
		{"doctor"}, {"agent", "list"}, {"log", "read"}, {"log", "tail"},
		{"log", "verify", "--strict"}, {"log", "feeds"}, {"decisions"},
		{"review", "list"}, {"journey"}, {"snapshot", "list"},
		{"curator", "status"}, {"curator", "run", "--dry-run"},
		{"search", "배포"}, {"index", "status"}, {"rollback", "--dry-run"},
	} {
		code, out, errs := logCLI(t, "", append([]string{"--vault", dir}, args...)...)
		wantCode := 0
		if args[0] == "rollback" {
			wantCode = 1 // no snapshot yet: said plainly, nothing changed
		}
		if code != wantCode {
			t.Errorf("nexus %s on a fresh vault: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
	}
	if got := treeOf(t, dir); !slices.Equal(got, want) {
		t.Fatalf("reading commands changed the vault to\n%v", got)
	}
	code, out, _ = logCLI(t, "", "--vault", dir, "--json", "doctor")
	var rep struct {
		OK       bool `json:"ok"`
		Problems int  `json:"problems"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || !rep.OK || rep.Problems != 0 {
		t.Errorf("doctor on a fresh vault: exit %d %s", code, out)
	}

	// Each first write makes the folder it needs.
	steps := []struct {
		args []string
		made string
	}{
		{[]string{"agent", "add", "lyra", "--role", "operations"}, "agents/lyra/IDENTITY.md"},
		{[]string{"--agent", "lyra", "memory", "add", "Staging uses port 2222"}, "agents/lyra/MEMORY.md"},
		{[]string{"--agent", "lyra", "log", "append", "deploy started"}, "log/live"},
		{[]string{"--agent", "lyra", "decide", "Secrets storage", "--decision", "sops"}, "log/decisions"},
		{[]string{"--agent", "lyra", "checkpoint", "save", "--task", "Deploy"}, "agents/lyra/checkpoints"},
		{[]string{"--agent", "lyra", "retain", "--type", "user", "The user reads Korean first"}, "review/pending"},
	}
	for _, s := range steps {
		if code, _, errs := logCLI(t, "", append([]string{"--vault", dir}, s.args...)...); code != 0 {
			t.Fatalf("nexus %s: %s", strings.Join(s.args, " "), errs)
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(s.made))); err != nil {
			t.Errorf("after nexus %s: %v", strings.Join(s.args, " "), err)
		}
	}
	if code, out, errs := logCLI(t, "", "--vault", dir, "review", "approve", "--all"); code != 0 {
		t.Fatalf("review approve --all: %s%s", out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "review", "archive")); err != nil {
		t.Errorf("approve made no archive: %v", err)
	}
	if code, out, errs := logCLI(t, "", "--vault", dir, "doctor"); code != 0 {
		t.Errorf("doctor after the first writes: exit %d\n%s%s", code, out, errs)
	}
}

// TestInitNewFolder: init of a folder that does not exist yet makes the
// same as on an existing one: the folder, .nexus/ and the ignore rules.
func TestInitNewFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "vault")
	if code, _, errs := logCLI(t, "", "init", dir); code != 0 {
		t.Fatalf("init: %s", errs)
	}
	if got := treeOf(t, dir); strings.Join(got, ",") != ".gitignore,.nexus,.stignore" {
		t.Errorf("new vault holds %v", got)
	}
}
