package retention

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// TestPlanRollback: the plan names every file of the snapshot with what a
// rollback does to it, changes nothing, and is what Rollback then does.
func TestPlanRollback(t *testing.T) {
	v := mustVault(t)
	write := func(rel, body string) {
		t.Helper()
		if err := vault.WriteFile(v.MustPath(rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := PlanRollback(v, ""); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("plan with no snapshot: %v", err)
	}
	write("projects/changed.md", "before")
	write("projects/deleted.md", "gone later")
	write("projects/same.md", "same")
	write("projects/한글.md", "전")
	paths := []string{"projects/changed.md", "projects/deleted.md", "projects/same.md", "projects/made.md", "projects/never.md", "projects/한글.md"}
	s, err := TakeSnapshot(v, "test", paths, t0)
	if err != nil {
		t.Fatal(err)
	}
	write("projects/changed.md", "after, longer")
	os.Remove(v.MustPath("projects/deleted.md"))
	write("projects/made.md", "made by the change")
	write("projects/한글.md", "후")

	plan, err := PlanRollback(v, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]RollbackFile{
		"projects/changed.md": {Change: ChangeRestore, Size: 6},
		"projects/deleted.md": {Change: ChangeRecreate, Size: 10},
		"projects/same.md":    {Change: ChangeUnchanged, Size: 4},
		"projects/made.md":    {Change: ChangeRemove},
		"projects/never.md":   {Change: ChangeUnchanged},
		"projects/한글.md":      {Change: ChangeRestore, Size: 3},
	}
	if plan.ID != s.ID || plan.Reason != "test" || len(plan.Files) != len(want) || plan.Changes != 4 {
		t.Fatalf("plan %+v", plan)
	}
	for _, f := range plan.Files {
		w := want[f.Path]
		if f.Change != w.Change || f.Size != w.Size {
			t.Errorf("%s: %s %d, want %s %d", f.Path, f.Change, f.Size, w.Change, w.Size)
		}
	}
	// Nothing changed: no new snapshot, the files as they were.
	if snaps, _ := ListSnapshots(v); len(snaps) != 1 {
		t.Errorf("the plan took a snapshot: %d", len(snaps))
	}
	if got := readFile(t, v, "projects/changed.md"); got != "after, longer" {
		t.Errorf("the plan changed a file: %q", got)
	}
	if _, err := Rollback(v, plan.ID, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	for rel, body := range map[string]string{"projects/changed.md": "before", "projects/deleted.md": "gone later", "projects/same.md": "same", "projects/한글.md": "전"} {
		if got := readFile(t, v, rel); got != body {
			t.Errorf("after rollback %s = %q", rel, got)
		}
	}
	if _, err := os.Stat(v.MustPath("projects/made.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("made.md survived: %v", err)
	}
	// After the rollback, a plan of the same snapshot has nothing to do.
	if again, err := PlanRollback(v, plan.ID); err != nil || again.Changes != 0 {
		t.Errorf("plan after rollback: %+v %v", again, err)
	}
	// A damaged copy fails the plan as it fails the rollback.
	os.WriteFile(filepath.Join(snapshotDir(v, s.ID), "files", "projects", "same.md"), []byte("tampered"), 0o644)
	if _, err := PlanRollback(v, s.ID); !errors.Is(err, ErrSnapshotCorrupt) {
		t.Errorf("plan of a damaged snapshot: %v", err)
	}
	if _, err := PlanRollback(v, "../etc"); !errors.Is(err, vault.ErrInvalid) {
		t.Errorf("plan of a bad id: %v", err)
	}
}
