package retention

import (
	"os"
	"strings"
	"testing"
)

// An approval whose fact already landed from the same item (a process
// killed after applying, before archiving) completes instead of refusing
// "fact already exists".
func TestApproveCompletesWhenTheFactLanded(t *testing.T) {
	v := mustVault(t)
	it := mustRetain(t, v, "lyra", fact("deploy day"), t0)
	if _, err := apply(v, it, t0); err != nil {
		t.Fatal(err)
	}
	done, err := Approve(v, it.ID, Decision{By: "ada", Now: t0})
	if err != nil {
		t.Fatalf("approve after the fact landed: %v", err)
	}
	if done.Status != StatusApproved || done.Result == "" {
		t.Errorf("approved: %+v", done)
	}
	if _, err := os.Stat(v.MustPath(PendingPath(it.ID))); err == nil {
		t.Error("pending file still there")
	}
	// A fact of the same name from elsewhere still refuses.
	other := mustRetain(t, v, "lyra", fact("deploy day"), t0)
	if _, err := Approve(v, other.ID, Decision{By: "ada", Now: t0}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("approving a second item of the same name: %v", err)
	}
}

// Every half-done state of a decision is finished by Recover, and doctor's
// list is empty afterwards.
func TestRecoverFinishesHalfDoneDecisions(t *testing.T) {
	v := mustVault(t)
	// 1. Intent written, nothing else: the approval runs.
	a := mustRetain(t, v, "lyra", fact("alpha"), t0)
	if _, err := beginIntent(v, Intent{Op: IntentApprove, ID: a.ID, By: "ada", Now: t0}); err != nil {
		t.Fatal(err)
	}
	// 2. Fact applied, not archived.
	b := mustRetain(t, v, "lyra", fact("beta"), t0)
	if _, err := beginIntent(v, Intent{Op: IntentApprove, ID: b.ID, By: "ada", Now: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := apply(v, b, t0); err != nil {
		t.Fatal(err)
	}
	// 3. Rejected: archive written, pending not removed yet.
	c := mustRetain(t, v, "lyra", fact("gamma"), t0)
	if _, err := beginIntent(v, Intent{Op: IntentReject, ID: c.ID, By: "ada", Now: t0}); err != nil {
		t.Fatal(err)
	}
	old := readFile(t, v, c.Path)
	if err := os.MkdirAll(v.MustPath("review/archive"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v.MustPath(ArchivePath(c.ID)), []byte(strings.Replace(old, "status: pending", "status: rejected", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if ins, _ := Unfinished(v); len(ins) != 3 {
		t.Fatalf("unfinished = %+v, want 3", ins)
	}
	res, err := Recover(v)
	if err != nil || len(res.Finished) != 3 {
		t.Fatalf("recover: %+v, %v", res, err)
	}
	for _, id := range []string{a.ID, b.ID, c.ID} {
		it, err := Get(v, id)
		if err != nil || it.Path != ArchivePath(id) {
			t.Errorf("%s after recover: %+v %v", id, it, err)
		}
	}
	if it, _ := Get(v, b.ID); it.Status != StatusApproved {
		t.Errorf("b: %+v", it)
	}
	if it, _ := Get(v, c.ID); it.Status != StatusRejected {
		t.Errorf("c: %+v", it)
	}
	if ins, _ := Unfinished(v); len(ins) != 0 {
		t.Errorf("still unfinished: %+v", ins)
	}
	idx := readFile(t, v, "agents/lyra/memory/INDEX.md")
	if !strings.Contains(idx, "[[alpha|") || !strings.Contains(idx, "[[beta|") || strings.Contains(idx, "gamma") {
		t.Errorf("INDEX.md after recover:\n%s", idx)
	}
}
