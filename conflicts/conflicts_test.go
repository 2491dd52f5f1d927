package conflicts

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

const stCopy = ".sync-conflict-20261201-101500-ABCDEFG"

func writeRel(tb testing.TB, v *vault.Vault, rel, data string) {
	tb.Helper()
	p := v.MustPath(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func mustResolve(tb testing.TB, v *vault.Vault) Report {
	tb.Helper()
	rep, err := Resolve(context.Background(), v, t0)
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}

// checkSettled asserts that nothing mergeable is left and that a second
// run does nothing.
func checkSettled(tb testing.TB, v *vault.Vault) {
	tb.Helper()
	found, err := Find(v, ScanOptions{Notes: true})
	if err != nil {
		tb.Fatal(err)
	}
	for _, c := range found {
		if c.Mergeable() {
			tb.Errorf("left unhandled: %+v", c)
		}
	}
	if again := mustResolve(tb, v); len(again.Resolved) != 0 {
		tb.Errorf("second run did more: %+v", again.Resolved)
	}
}

func memEntries(tb testing.TB, v *vault.Vault, agent string) []string {
	tb.Helper()
	m, err := agents.OpenMemory(v, agent, agents.TargetMemory)
	if err != nil {
		tb.Fatal(err)
	}
	e, err := m.Entries()
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func TestResolveMemoryCopy(t *testing.T) {
	v := mustVault(t)
	writeRel(t, v, "agents/lyra/MEMORY.md", "deploy on fridays is banned\n§\nagent note")
	copyRel := "agents/lyra/MEMORY" + stCopy + ".md"
	writeRel(t, v, copyRel, "deploy on fridays is banned\n§\nperson's edit on the laptop")
	rep := mustResolve(t, v)
	if len(rep.Resolved) != 1 || rep.Resolved[0].Action != "merged" {
		t.Fatalf("resolved %+v", rep.Resolved)
	}
	want := []string{"deploy on fridays is banned", "agent note", "person's edit on the laptop"}
	if got := memEntries(t, v, "lyra"); !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	if exists(v, copyRel) {
		t.Error("the copy is still in the agent's home")
	}
	if got := readFile(t, v, ArchiveDir+"/"+copyRel); !strings.Contains(got, "person's edit") {
		t.Errorf("archived copy %q", got)
	}
	checkSettled(t, v)
}

func TestResolveMemoryOverTheLimitFilesTheRest(t *testing.T) {
	v := mustVault(t)
	if err := v.UpdateConfig(func(c *vault.Config) error { c.MemoryCharLimit = 20; return nil }); err != nil {
		t.Fatal(err)
	}
	v, _ = vault.Open(v.Root())
	writeRel(t, v, "agents/lyra/MEMORY.md", "0123456789")
	copyRel := "agents/lyra/MEMORY (Ann's conflicted copy 2026-12-01).md"
	writeRel(t, v, copyRel, "0123456789\n§\nfits\n§\nthis one is far too long to fit")
	rep := mustResolve(t, v)
	if len(rep.Resolved) != 1 || rep.Resolved[0].Action != "filed" || rep.Resolved[0].ReviewID == "" {
		t.Fatalf("resolved %+v", rep.Resolved)
	}
	if got := memEntries(t, v, "lyra"); !slices.Equal(got, []string{"0123456789", "fits"}) {
		t.Errorf("entries %q", got)
	}
	it, err := retention.Get(v, rep.Resolved[0].ReviewID)
	if err != nil {
		t.Fatal(err)
	}
	if it.Kind != retention.KindMemory || len(it.Ops) != 1 || it.Ops[0].Content != "this one is far too long to fit" || it.Agent != "lyra" {
		t.Errorf("filed item %+v", it)
	}
	checkSettled(t, v)
	// Approving it goes through the memory tool's limit: refused, kept.
	if _, err := retention.Approve(v, it.ID, retention.Decision{By: "ann", Now: t0}); err == nil {
		t.Error("an approval past the limit was applied")
	}
}

func TestResolveMemoryMarkers(t *testing.T) {
	v := mustVault(t)
	writeRel(t, v, "agents/lyra/USER.md", "Ann\n§\n<<<<<<< HEAD\nprefers short answers\n=======\nworks in Seoul\n>>>>>>> origin/main\n")
	rep := mustResolve(t, v)
	if len(rep.Resolved) != 1 || rep.Resolved[0].Action != "merged" || rep.Resolved[0].Archived == "" {
		t.Fatalf("resolved %+v", rep.Resolved)
	}
	got := readFile(t, v, "agents/lyra/USER.md")
	if got != "Ann\n§\nprefers short answers\n§\nworks in Seoul" {
		t.Errorf("USER.md = %q", got)
	}
	if a := readFile(t, v, rep.Resolved[0].Archived); !strings.Contains(a, "<<<<<<< HEAD") {
		t.Errorf("archived %q", a)
	}
	checkSettled(t, v)
}

func TestResolveReviewCopies(t *testing.T) {
	tests := []struct {
		name       string
		live, copy func(string) string // from the pending file's bytes
		wantStatus string
		wantError  bool
		wantAction string
		conflict   bool // a retention.KindConflict item is filed
	}{
		{name: "decided on the copy's side", live: same, copy: status("approved"), wantStatus: retention.StatusApproved, wantAction: "merged"},
		{name: "decided on this side", live: status("rejected"), copy: same, wantStatus: retention.StatusRejected, wantAction: "merged"},
		{name: "same decision on both", live: status("approved"), copy: status("approved"), wantStatus: retention.StatusApproved, wantAction: "archived"},
		{name: "different decisions", live: status("approved"), copy: status("rejected"), wantStatus: retention.StatusPending, wantError: true, wantAction: "filed"},
		{name: "different texts undecided", live: same, copy: body("an edited body"), wantStatus: retention.StatusPending, wantAction: "filed", conflict: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustVault(t)
			it := mustRetain(t, v, "lyra", fact("Port"), t0)
			orig := readFile(t, v, it.Path)
			writeRel(t, v, it.Path, tt.live(orig))
			copyRel := strings.TrimSuffix(it.Path, ".md") + stCopy + ".md"
			writeRel(t, v, copyRel, tt.copy(orig))
			// The copy is not an item of its own.
			items, _ := retention.List(v, retention.Filter{})
			if len(items) != 1 {
				t.Fatalf("List sees %d items with a conflict copy beside one", len(items))
			}
			rep := mustResolve(t, v)
			if len(rep.Resolved) != 1 || rep.Resolved[0].Action != tt.wantAction {
				t.Fatalf("resolved %+v", rep.Resolved)
			}
			got, err := retention.ParseItem(it.ID, []byte(readFile(t, v, it.Path)))
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.wantStatus || (got.Error != "") != tt.wantError {
				t.Errorf("item status %q error %q; want %q, error %v", got.Status, got.Error, tt.wantStatus, tt.wantError)
			}
			if exists(v, copyRel) || !exists(v, ArchiveDir+"/"+copyRel) {
				t.Error("the copy was not moved to the conflicts archive")
			}
			items, _ = retention.List(v, retention.Filter{})
			n := 0
			for _, i := range items {
				if i.Kind == retention.KindConflict {
					n++
				}
			}
			if (n == 1) != tt.conflict {
				t.Errorf("%d conflict items, want one: %v", n, tt.conflict)
			}
			checkSettled(t, v)
		})
	}
}

func same(s string) string { return s }
func status(st string) func(string) string {
	return func(s string) string { return strings.Replace(s, "status: pending", "status: "+st, 1) }
}
func body(b string) func(string) string {
	return func(s string) string { return s[:strings.LastIndex(s, "---\n")+4] + b + "\n" }
}

// A decision made in Obsidian on one machine is carried out once, after
// the merge, on the machine that holds both versions.
func TestResolvedReviewDecisionIsCarriedOut(t *testing.T) {
	v := mustVault(t)
	it := mustRetain(t, v, "lyra", fact("Port"), t0)
	orig := readFile(t, v, it.Path)
	writeRel(t, v, strings.TrimSuffix(it.Path, ".md")+stCopy+".md", status("approved")(orig))
	// A keeper as 'nexus watch' starts it; its first run ends before
	// Close returns.
	k := retention.StartKeeper(context.Background(), v, retention.KeeperOptions{Every: time.Hour, Now: func() time.Time { return t0 }, Logger: slog.New(slog.DiscardHandler), Before: Keep})
	k.Close()
	if exists(v, it.Path) || !exists(v, retention.ArchivePath(it.ID)) {
		t.Fatal("the approval was not carried out after the merge")
	}
	if _, err := agents.ReadFact(v, "lyra", "Port"); err != nil {
		t.Errorf("the approved fact is not there: %v", err)
	}
	checkSettled(t, v)
}

func TestResolvePendingAlreadyArchived(t *testing.T) {
	v := mustVault(t)
	it := mustRetain(t, v, "lyra", fact("Port"), t0)
	pending := readFile(t, v, it.Path)
	if _, err := retention.Reject(v, it.ID, retention.Decision{By: "ann", Now: t0}); err != nil {
		t.Fatal(err)
	}
	writeRel(t, v, it.Path, pending) // the other machine's edit brought it back
	rep := mustResolve(t, v)
	if len(rep.Resolved) != 1 || rep.Resolved[0].Action != "archived" || exists(v, it.Path) {
		t.Fatalf("resolved %+v", rep.Resolved)
	}
	checkSettled(t, v)
}

func TestResolveIdentityFilesAConflictAndApprovingSwaps(t *testing.T) {
	v := mustVault(t)
	idRel := "agents/lyra/IDENTITY.md"
	mine := readFile(t, v, idRel)
	other := strings.Replace(mine, "## Priorities\n(none yet)", "## Priorities\n- keep the build green", 1)
	copyRel := "agents/lyra/IDENTITY" + stCopy + ".md"
	writeRel(t, v, copyRel, other)
	rep := mustResolve(t, v)
	if len(rep.Resolved) != 1 || rep.Resolved[0].Action != "filed" {
		t.Fatalf("resolved %+v", rep.Resolved)
	}
	id := rep.Resolved[0].ReviewID
	if readFile(t, v, idRel) != mine {
		t.Error("IDENTITY.md changed before a person chose")
	}
	it, err := retention.Get(v, id)
	if err != nil || it.Kind != retention.KindConflict || it.Target != idRel || !strings.Contains(it.Body, "keep the build green") {
		t.Fatalf("item %+v, %v", it, err)
	}
	checkSettled(t, v)
	done, err := retention.Approve(v, id, retention.Decision{By: "ann", Now: t0})
	if err != nil || done.Result != idRel {
		t.Fatalf("approve = %+v, %v", done, err)
	}
	if readFile(t, v, idRel) != other {
		t.Error("approving did not put the other version in place")
	}
}

func TestResolveConfigMarkers(t *testing.T) {
	v := mustVault(t)
	cfg := readFile(t, v, vault.ConfigFile)
	line := cfg[strings.Index(cfg, "user_char_limit:"):]
	line = line[:strings.IndexByte(line, '\n')+1]
	marked := strings.Replace(cfg, line, "<<<<<<< HEAD\n"+line+"=======\nuser_char_limit: 1500\n>>>>>>> laptop\n", 1)
	writeRel(t, v, vault.ConfigFile, marked)
	aside, err := vault.SetAsideConflictedConfig(v.Root())
	if err != nil || aside == "" {
		t.Fatalf("set aside = %q, %v", aside, err)
	}
	v, err = vault.Open(v.Root())
	if err != nil {
		t.Fatal(err)
	}
	rep := mustResolve(t, v)
	if len(rep.Resolved) != 1 || rep.Resolved[0].Action != "filed" {
		t.Fatalf("resolved %+v", rep.Resolved)
	}
	if readFile(t, v, vault.ConfigFile) != cfg {
		t.Error("config is not the first side")
	}
	checkSettled(t, v)
	if _, err := retention.Approve(v, rep.Resolved[0].ReviewID, retention.Decision{By: "ann", Now: t0}); err != nil {
		t.Fatal(err)
	}
	v, err = vault.Open(v.Root())
	if err != nil || v.Config().UserCharLimit != 1500 {
		t.Fatalf("after approving the other side: %v, limit %d", err, v.Config().UserCharLimit)
	}
}

func TestResolveLeavesFeedsAndNotes(t *testing.T) {
	v := mustVault(t)
	writeRel(t, v, "log/live/2026-12/lyra@vps"+stCopy+".md", "x")
	writeRel(t, v, "projects/plan"+stCopy+".md", "x")
	writeRel(t, v, "projects/plan.md", "<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n")
	writeRel(t, v, "projects/Chapter 2.md", "not a copy")
	writeRel(t, v, "projects/Chapter.md", "a note")
	found, err := Find(v, ScanOptions{Notes: true})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, c := range found {
		paths = append(paths, c.Path+":"+c.File)
	}
	want := []string{"log/live/2026-12/lyra@vps" + stCopy + ".md:feed", "projects/plan.md:note", "projects/plan" + stCopy + ".md:note"}
	if !slices.Equal(paths, want) {
		t.Errorf("found %q, want %q", paths, want)
	}
	rep := mustResolve(t, v)
	if len(rep.Resolved) != 0 || len(rep.Left) != 1 {
		t.Errorf("resolve touched %+v / left %+v", rep.Resolved, rep.Left)
	}
	if !exists(v, "log/live/2026-12/lyra@vps"+stCopy+".md") {
		t.Error("a feed's copy was moved")
	}
}

// A numbered duplicate counts only beside a Nexus file with several
// writers.
func TestResolveNumberedDuplicate(t *testing.T) {
	v := mustVault(t)
	writeRel(t, v, "agents/lyra/MEMORY.md", "a")
	writeRel(t, v, "agents/lyra/MEMORY 2.md", "a\n§\nb")
	rep := mustResolve(t, v)
	if len(rep.Resolved) != 1 || !slices.Equal(memEntries(t, v, "lyra"), []string{"a", "b"}) {
		t.Fatalf("resolved %+v", rep.Resolved)
	}
	checkSettled(t, v)
}

// The same files give the same outcome on two machines: the same entries
// in the same order and the same review ids.
func TestResolveIsTheSameOnTwoMachines(t *testing.T) {
	var outs []string
	for range 2 {
		v := mustVault(t)
		if err := v.UpdateConfig(func(c *vault.Config) error { c.MemoryCharLimit = 12; return nil }); err != nil {
			t.Fatal(err)
		}
		v, _ = vault.Open(v.Root())
		writeRel(t, v, "agents/lyra/MEMORY.md", "aaaa")
		p := "agents/lyra/MEMORY" + stCopy + ".md"
		writeRel(t, v, p, "bbbb\n§\ncccccccc")
		mtime := t0
		if err := os.Chtimes(v.MustPath(p), mtime, mtime); err != nil {
			t.Fatal(err)
		}
		rep := mustResolve(t, v)
		it, err := retention.Get(v, rep.Resolved[0].ReviewID)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := it.Render()
		outs = append(outs, readFile(t, v, "agents/lyra/MEMORY.md")+"|"+string(data))
	}
	if outs[0] != outs[1] {
		t.Errorf("two machines differ:\n%s\n%s", outs[0], outs[1])
	}
}
