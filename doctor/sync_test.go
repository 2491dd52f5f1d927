package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

func writeVaultFile(tb testing.TB, v *vault.Vault, rel, data string) {
	tb.Helper()
	p := filepath.Join(v.Root(), filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func mustFix(tb testing.TB, dir string) *FixReport {
	tb.Helper()
	rep, err := Fix(context.Background(), dir, Options{Now: func() time.Time { return t0 }})
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}

func TestSyncChecksAndFix(t *testing.T) {
	v := mustVault(t)
	// A git repository around the vault, and a person's .gitignore
	// without Nexus's rules.
	if err := os.Mkdir(filepath.Join(v.Root(), ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeVaultFile(t, v, ".gitignore", "*.pdf\n")
	writeVaultFile(t, v, "agents/lyra/MEMORY.md", "a")
	writeVaultFile(t, v, "agents/lyra/MEMORY.sync-conflict-20261201-101500-ABCDEFG.md", "a\n§\nb")
	writeVaultFile(t, v, "agents/ella/USER.md", "<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> laptop\n")
	writeVaultFile(t, v, "projects/plan (conflicted copy).md", "a note's copy")

	rep := mustRun(t, v.Root())
	if rep.OK {
		t.Fatal("doctor passes with conflict copies and missing ignore rules")
	}
	ign := findingsOf(rep, "ignore-rules")
	if len(ign) != 1 || ign[0].Path != ".gitignore" || !strings.Contains(ign[0].Problem, "/.nexus/keys/") || !strings.Contains(ign[0].Fix, "doctor --fix") {
		t.Errorf("ignore-rules findings %+v", ign)
	}
	cf := findingsOf(rep, "conflicts")
	if len(cf) != 3 {
		t.Fatalf("conflicts findings %+v", cf)
	}
	for _, f := range cf {
		note := strings.HasPrefix(f.Path, "projects/")
		if note != strings.Contains(f.Fix, "by hand") || !note && !strings.Contains(f.Fix, "doctor --fix") {
			t.Errorf("finding %+v has the wrong fix", f)
		}
	}

	fixed := mustFix(t, v.Root())
	if len(fixed.IgnoreFiles) == 0 || len(fixed.Conflicts.Resolved) != 2 || len(fixed.Conflicts.Left) != 0 {
		t.Fatalf("fix report %+v", fixed)
	}
	if gi, _ := os.ReadFile(filepath.Join(v.Root(), ".gitignore")); !strings.HasPrefix(string(gi), "*.pdf\n\n# >>> nexus") {
		t.Errorf(".gitignore after fix:\n%s", gi)
	}
	rep = mustRun(t, v.Root())
	if n := len(findingsOf(rep, "ignore-rules")); n != 0 {
		t.Errorf("%d ignore-rules findings after fix", n)
	}
	if cf := findingsOf(rep, "conflicts"); len(cf) != 1 || !strings.HasPrefix(cf[0].Path, "projects/") {
		t.Errorf("after fix, conflicts findings %+v; want only the note's copy", cf)
	}
	// A second fix changes nothing.
	if again := mustFix(t, v.Root()); len(again.IgnoreFiles) != 0 || len(again.Conflicts.Resolved) != 0 {
		t.Errorf("second fix did %+v", again)
	}
}

// A config.yaml with git markers stops every command; doctor explains it
// and --fix makes the vault open again, filing the choice.
func TestFixConfigWithMarkers(t *testing.T) {
	v := mustVault(t)
	cfg, _ := os.ReadFile(filepath.Join(v.Root(), vault.ConfigFile))
	writeVaultFile(t, v, vault.ConfigFile, "<<<<<<< HEAD\n"+string(cfg)+"=======\nmemory_char_limit: 3000\n>>>>>>> laptop\n")
	rep := mustRun(t, v.Root())
	if len(findingsOf(rep, "config")) == 0 {
		t.Error("config check did not fail")
	}
	cf := findingsOf(rep, "conflicts")
	if len(cf) != 1 || cf[0].Path != vault.ConfigFile || !strings.Contains(cf[0].Problem, "markers") {
		t.Fatalf("conflicts findings %+v", cf)
	}
	fixed := mustFix(t, v.Root())
	if fixed.ConfigSetAside == "" || len(fixed.Conflicts.Resolved) != 1 || fixed.Conflicts.Resolved[0].ReviewID == "" {
		t.Fatalf("fix report %+v", fixed)
	}
	rep = mustRun(t, v.Root())
	if len(findingsOf(rep, "config")) != 0 {
		t.Errorf("config still fails: %+v", findingsOf(rep, "config"))
	}
	cf = findingsOf(rep, "conflicts")
	if len(cf) != 1 || !strings.Contains(cf[0].Problem, "person's choice") || !strings.Contains(cf[0].Fix, "review approve "+fixed.Conflicts.Resolved[0].ReviewID) {
		t.Errorf("after fix: %+v", cf)
	}
	if _, err := retention.Get(mustOpen(t, v.Root()), fixed.Conflicts.Resolved[0].ReviewID); err != nil {
		t.Error(err)
	}
}

func mustOpen(tb testing.TB, dir string) *vault.Vault {
	tb.Helper()
	v, err := vault.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}
