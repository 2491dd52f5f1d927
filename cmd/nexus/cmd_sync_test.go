package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// init writes the ignore rules once; doctor --fix merges a conflict copy
// and reports it in its one JSON document.
func TestInitIgnoreRulesAndDoctorFix(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := doctorCLI(t, "--json", "init", dir)
	if code != 0 {
		t.Fatalf("init: %d %s", code, stderr)
	}
	var res struct {
		IgnoreRules []string `json:"ignore_rules"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("init --json: %v\n%s", err, stdout)
	}
	if strings.Join(res.IgnoreRules, ",") != ".gitignore,.stignore" {
		t.Errorf("ignore_rules = %q", res.IgnoreRules)
	}
	gi, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if err != nil || !strings.Contains(string(gi), "/.nexus/keys/\n") {
		t.Fatalf(".gitignore: %q, %v", gi, err)
	}
	if code, stdout, _ = doctorCLI(t, "init", dir); code != 0 || !strings.Contains(stdout, "nothing changed") {
		t.Errorf("second init: %d %s", code, stdout)
	}

	if code, _, stderr := doctorCLI(t, "--vault", dir, "agent", "add", "lyra"); code != 0 {
		t.Fatalf("agent add: %d %s", code, stderr)
	}
	home := filepath.Join(dir, "agents", "lyra")
	if err := os.WriteFile(filepath.Join(home, "MEMORY.md"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "MEMORY.sync-conflict-20261201-101500-ABCDEFG.md"), []byte("a\n§\nb"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ := doctorCLI(t, "--vault", dir, "doctor"); code != exitRefused || !strings.Contains(stdout, "conflict copy of agents/lyra/MEMORY.md left by Syncthing") {
		t.Fatalf("doctor with a conflict copy: %d\n%s", code, stdout)
	}
	code, stdout, stderr = doctorCLI(t, "--vault", dir, "--json", "doctor", "--fix")
	if code != 0 {
		t.Fatalf("doctor --fix: %d\n%s%s", code, stdout, stderr)
	}
	var rep struct {
		OK    bool `json:"ok"`
		Fixed struct {
			Conflicts struct {
				Resolved []struct {
					Action, Original string
				} `json:"resolved"`
			} `json:"conflicts"`
		} `json:"fixed"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("doctor --fix --json is not one JSON document: %v\n%s", err, stdout)
	}
	if !rep.OK || len(rep.Fixed.Conflicts.Resolved) != 1 || rep.Fixed.Conflicts.Resolved[0].Action != "merged" {
		t.Errorf("report %+v", rep)
	}
	if mem, _ := os.ReadFile(filepath.Join(home, "MEMORY.md")); string(mem) != "a\n§\nb" {
		t.Errorf("MEMORY.md = %q", mem)
	}
	if code, stdout, _ = doctorCLI(t, "--vault", dir, "doctor", "--fix"); code != 0 || !strings.Contains(stdout, "nothing needed fixing") {
		t.Errorf("second doctor --fix: %d\n%s", code, stdout)
	}
}
