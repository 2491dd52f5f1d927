package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// vaultDigest fingerprints every file and folder of the vault but the
// search index: any change a command makes shows.
func vaultDigest(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if filepath.ToSlash(rel) == ".nexus/index" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			lines = append(lines, rel+"/")
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		lines = append(lines, rel+" "+hex.EncodeToString(sum[:8]))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// rollbackVault makes a vault with two approved facts: one snapshot, of
// approve --all, to roll back. It returns the vault and the memory index
// the approval made.
func rollbackVault(t *testing.T) (dir, index string) {
	t.Helper()
	dir = factVault(t)
	for _, text := range []string{"Alpha fact", "배포 규칙"} {
		if code, _, errs := factCLI(t, "", "--vault", dir, "--agent", "lyra", "retain", "--type", "project", text); code != 0 {
			t.Fatalf("retain: %s", errs)
		}
	}
	if code, _, errs := factCLI(t, "", "--vault", dir, "review", "approve", "--all"); code != 0 {
		t.Fatalf("approve --all: %s", errs)
	}
	index = filepath.Join(dir, "agents", "lyra", "memory", "INDEX.md")
	if _, err := os.Stat(index); err != nil {
		t.Fatal(err)
	}
	return dir, index
}

// TestRollbackDryRun: --dry-run lists each file of the snapshot with what
// would happen to it and the snapshot it comes from, and changes nothing.
func TestRollbackDryRun(t *testing.T) {
	dir, _ := rollbackVault(t)
	before := vaultDigest(t, dir)

	code, out, errs := factCLI(t, "", "--vault", dir, "--json", "rollback", "--dry-run")
	var plan struct {
		DryRun   bool   `json:"dry_run"`
		Snapshot string `json:"snapshot"`
		Reason   string `json:"reason"`
		Changes  int    `json:"changes"`
		Files    []struct {
			Path, Change string
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &plan) != nil {
		t.Fatalf("--json rollback --dry-run: %d %s %s", code, out, errs)
	}
	if !plan.DryRun || !strings.HasPrefix(plan.Snapshot, "s-") || !strings.Contains(plan.Reason, "approve --all") || plan.Changes == 0 || plan.Changes > len(plan.Files) {
		t.Fatalf("plan %+v", plan)
	}
	changes := map[string]string{}
	for _, f := range plan.Files {
		changes[f.Path] = f.Change
	}
	// The approval made the index and the facts (removed by a rollback)
	// and moved the pending items to the archive (recreated).
	if changes["agents/lyra/memory/INDEX.md"] != "remove" {
		t.Errorf("INDEX.md: %q in %v", changes["agents/lyra/memory/INDEX.md"], changes)
	}
	recreated := 0
	for p, c := range changes {
		if strings.HasPrefix(p, "review/pending/") && c == "recreate" {
			recreated++
		}
	}
	if recreated != 2 {
		t.Errorf("want the 2 pending items recreated: %v", changes)
	}

	code, out, errs = factCLI(t, "", "--vault", dir, "rollback", "-n")
	if code != 0 || !strings.Contains(out, plan.Snapshot) || !strings.Contains(out, "remove") || !strings.Contains(out, "agents/lyra/memory/INDEX.md") ||
		!strings.Contains(out, "Dry run: nothing changed. To restore: nexus rollback "+plan.Snapshot+" --yes") || errs != "" {
		t.Fatalf("rollback --dry-run: %d\n%s%s", code, out, errs)
	}
	if after := vaultDigest(t, dir); after != before {
		t.Fatalf("--dry-run changed the vault:\n%s\nto\n%s", before, after)
	}
	// A dry run of a snapshot that is not there fails as the rollback would.
	if code, _, _ := factCLI(t, "", "--vault", dir, "rollback", "--dry-run", "s-nope"); code != exitRefused {
		t.Errorf("dry run of an unknown snapshot: exit %d", code)
	}
}

// TestRollbackAsks: without --yes a rollback asks on a terminal and does
// nothing unless the answer is yes; elsewhere it refuses, naming --yes.
func TestRollbackAsks(t *testing.T) {
	dir, index := rollbackVault(t)
	before := vaultDigest(t, dir)

	// Not a terminal (a script, a pipe, a test) and --json: refused, exit 2.
	for _, args := range [][]string{{"rollback"}, {"--json", "rollback"}} {
		code, out, errs := factCLI(t, "y\n", append([]string{"--vault", dir}, args...)...)
		if code != exitUsage || !strings.Contains(errs, "--yes") || !strings.Contains(errs, "--dry-run") {
			t.Errorf("nexus %v without --yes: exit %d\n%s%s", args, code, out, errs)
		}
		if args[0] == "--json" {
			if _, err := oneJSONDocument(out); err != nil || !strings.Contains(out, `"exit_code":2`) {
				t.Errorf("--json refusal: %v %s", err, out)
			}
		}
	}

	// On a terminal: the list, a question, and only y or yes goes ahead.
	ask := func(answer string) (string, string, error) {
		var out, errb bytes.Buffer
		g := &globals{vaultDir: dir, ctx: context.Background(), stdin: strings.NewReader(answer), stdout: &out, stderr: &errb, now: time.Now}
		err := runRollback(g, &rollbackOptions{interactive: func() bool { return true }}, nil)
		return out.String(), errb.String(), err
	}
	for _, answer := range []string{"", "\n", "n\n", "no\n", "N", "yess\n", "sure\n"} {
		out, errs, err := ask(answer)
		var re refusedError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "nothing changed") || out != "" {
			t.Errorf("answer %q: %v, stdout %q", answer, err, out)
		}
		if !strings.Contains(errs, "agents/lyra/memory/INDEX.md") || !strings.Contains(errs, "[y/N] ") || !strings.Contains(errs, "Snapshot s-") || !strings.Contains(errs, "(before review approve --all (2 items)):") {
			t.Errorf("answer %q: the question shows no list:\n%s", answer, errs)
		}
		if after := vaultDigest(t, dir); after != before {
			t.Fatalf("answer %q changed the vault", answer)
		}
	}
	out, errs, err := ask(" Yes\n")
	if err != nil || !strings.Contains(out, "Restored ") {
		t.Fatalf("answer yes: %v\n%s%s", err, out, errs)
	}
	if _, err := os.Stat(index); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("INDEX.md survived the rollback: %v", err)
	}
	// --yes needs no terminal; it undoes the rollback.
	if code, out, errs := factCLI(t, "", "--vault", dir, "--json", "rollback", "--yes"); code != 0 {
		t.Fatalf("rollback --yes: %d %s %s", code, out, errs)
	}
	if _, err := os.Stat(index); err != nil {
		t.Fatalf("rollback --yes did not undo the rollback: %v", err)
	}
}
