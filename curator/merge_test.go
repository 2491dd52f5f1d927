package curator

import (
	"errors"
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

// mergeFacts are written in this order (one hour apart) by mergeVault.
var mergeFacts = []agents.FactInput{
	// An English near-duplicate pair: the second restates the first and adds a line.
	{Name: "Deploy order", Description: "Staging first, then the canary, then prod", Type: agents.FactFeedback,
		Body: "Always deploy to staging first; wait for the canary to pass, then deploy to prod."},
	{Name: "Deployment sequence", Description: "Staging first, then the canary, then prod", Type: agents.FactFeedback,
		Body: "Always deploy to staging first; wait for the canary to pass, then deploy to prod.\nNever skip staging."},
	// A Korean near-duplicate pair.
	{Name: "PR 설명 언어", Description: "사용자는 PR 설명을 한국어로 원한다", Type: agents.FactUser,
		Body: "사용자는 PR 설명을 한국어로 쓰기를 원한다. 제목은 영어로."},
	{Name: "PR 설명은 한국어", Description: "사용자는 PR 설명을 한국어로 원한다", Type: agents.FactUser,
		Body: "사용자는 PR 설명을 한국어로 쓰기를 원한다. 제목은 영어로 쓴다."},
	// Facts on the same topics that say different things: never merged.
	{Name: "Friday freeze", Description: "No production deploys on Fridays", Type: agents.FactProject,
		Body: "No production deploys on Fridays; staging deploys are fine."},
	{Name: "Staging port", Description: "Staging SSH port is 2222", Type: agents.FactProject,
		Body: "Staging accepts SSH on port 2222."},
	{Name: "Staging port before", Description: "Staging SSH port is 2223", Type: agents.FactProject,
		Body: "Staging accepts SSH on port 2223."},
	{Name: "Production SSH", Description: "production SSH listens on port 2200", Type: agents.FactProject,
		Body: "The production host accepts SSH on port 2200 through the bastion."},
	{Name: "커밋 메시지 언어", Description: "사용자는 커밋 메시지를 영어로 원한다", Type: agents.FactUser,
		Body: "사용자는 커밋 메시지를 영어로 쓰기를 원한다."},
	{Name: "PR 제목 길이", Description: "사용자는 짧은 PR 제목을 원한다", Type: agents.FactUser,
		Body: "PR 제목은 짧게, 한 줄로 쓴다."},
}

// mergeVault writes mergeFacts for lyra, a MEMORY.md entry linking to the
// first, and reads the second three times (so it is the most recalled).
// It returns the slugs by name.
func mergeVault(t *testing.T) (*vault.Vault, map[string]string) {
	t.Helper()
	v := mustVault(t)
	slugs := map[string]string{}
	for i, in := range mergeFacts {
		f, err := agents.WriteFact(v, "lyra", in, t0.Add(time.Duration(i)*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		slugs[in.Name] = f.Slug
	}
	if _, err := FactStates(v, "lyra", t0); err != nil { // the curator starts watching
		t.Fatal(err)
	}
	m, err := agents.OpenMemory(v, "lyra", agents.TargetMemory)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Apply(agents.Op{Action: agents.ActionAdd, Content: "Deploy rules: see [[" + slugs["Deploy order"] + "]]"},
		agents.Op{Action: agents.ActionAdd, Content: "Reviews in the morning."}); err != nil {
		t.Fatal(err)
	}
	rec := agents.Recall(v)
	for i := range 3 {
		rec.Record(agents.RecallEvent{Time: t0.Add(time.Duration(20+i) * time.Hour), Agent: "lyra", Kind: agents.RecallRead, Path: agents.FactPath("lyra", slugs["Deployment sequence"])})
	}
	rec.Record(agents.RecallEvent{Time: t0.Add(23 * time.Hour), Agent: "lyra", Kind: agents.RecallRead, Path: agents.FactPath("lyra", slugs["Deploy order"])})
	return v, slugs
}

func without(sums map[string]string, prefixes ...string) map[string]string {
	out := map[string]string{}
	for k, s := range sums {
		if !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			out[k] = s
		}
	}
	return out
}

func mergePlans(t *testing.T, v *vault.Vault) map[string]curatorPlan {
	t.Helper()
	out := map[string]curatorPlan{}
	for _, it := range pendingOf(t, v, retention.KindMerge) {
		plan, err := parsePlan(it.Body)
		if err != nil {
			t.Fatal(err)
		}
		out[it.ID] = plan
	}
	return out
}

// TestMergeSimilarity pins the rule on pairs in English and Korean.
func TestMergeSimilarity(t *testing.T) {
	text := func(i int) string {
		return mergeFacts[i].Description + "\n" + mergeFacts[i].Body
	}
	for _, tc := range []struct {
		name  string
		a, b  int
		merge bool
	}{
		{"english restatement", 0, 1, true},
		{"korean restatement", 2, 3, true},
		{"same topic, other rule", 0, 4, false},
		{"one number differs", 5, 6, false},
		{"other host, other port", 5, 7, false},
		{"korean: commit messages, not PR descriptions", 2, 8, false},
		{"korean: PR titles, not PR descriptions", 2, 9, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ga, na := shingles(text(tc.a))
			gb, nb := shingles(text(tc.b))
			s := similarity(ga, gb)
			got := s+1e-9 >= float64(vault.CuratorConfig{}.MergePercent())/100 && numbersAgree(na, nb)
			if got != tc.merge {
				t.Errorf("similarity %.2f, numbers agree %v: merge %v, want %v", s, numbersAgree(na, nb), got, tc.merge)
			}
		})
	}
	// Folding: full-width letters, case, NFD Hangul and punctuation do not
	// make two texts different.
	ga, _ := shingles("ＳＴＡＧＩＮＧ first, then PROD!")
	gb, _ := shingles("staging first then prod")
	if s := similarity(ga, gb); s != 1 {
		t.Errorf("folded texts %.2f similar, want 1", s)
	}
	ga, _ = shingles("\u1112\u1161\u11ab\u1100\u116e\u11a8\u110b\u1165") // 한국어, decomposed
	gb, _ = shingles("한국어")
	if s := similarity(ga, gb); s != 1 {
		t.Errorf("NFD and NFC Hangul %.2f similar, want 1", s)
	}
}

// TestCuratorMerge: near duplicates (English and Korean) are proposed as
// one merge each, with evidence and the exact diff; facts that only share
// a topic are not; the pass changes nothing; approval keeps the most
// recalled (else the newest), appends the others' distinct lines, archives
// them byte for byte and relinks memory; rollback restores every byte, of
// the approval and of the whole pass.
func TestCuratorMerge(t *testing.T) {
	v, slugs := mergeVault(t)
	now := t0.Add(5 * day)
	before := treeSums(t, v)
	res, err := Run(v, PassOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	plans := mergePlans(t, v)
	if len(plans) != 2 {
		t.Fatalf("%d merge proposals, want 2 (notes %v)", len(plans), res.Notes)
	}
	if d := diffSums(before, without(treeSums(t, v), vault.PendingDir, vault.CuratorDir)); len(d) > 0 {
		t.Fatalf("the pass changed files: %v", d)
	}
	byKeep := map[string]string{}
	for id, plan := range plans {
		byKeep[plan.Keep.Slug] = id
		if len(plan.Archive) != 1 {
			t.Errorf("%s archives %d facts", id, len(plan.Archive))
		}
	}
	enKeep, enGone := slugs["Deployment sequence"], slugs["Deploy order"] // the most recalled is kept
	koKeep, koGone := slugs["PR 설명은 한국어"], slugs["PR 설명 언어"]              // neither recalled: the newest
	for keep, gone := range map[string]string{enKeep: enGone, koKeep: koGone} {
		id := byKeep[keep]
		if id == "" || plans[id].Archive[0].Slug != gone {
			t.Fatalf("no merge keeping %s and archiving %s: %+v", keep, gone, plans)
		}
	}
	enID := byKeep[enKeep]
	it, err := retention.Get(v, enID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Evidence", "% similar to " + enKeep, "merge at 70%", "is kept (the most recalled): 3 reads", "```diff",
		"move agents/lyra/memory/" + enGone + ".md → review/archive/facts/lyra/" + enGone + ".TIME.md",
		"(body unchanged: the merged facts hold nothing it lacks)", "- Deploy rules: see [[" + enGone + "]]", "+ Deploy rules: see [[" + enKeep + "]]"} {
		if !strings.Contains(it.Body, want) {
			t.Errorf("the proposal lacks %q:\n%s", want, it.Body)
		}
	}
	if it.Target != agents.FactPath("lyra", enKeep) {
		t.Errorf("target %q", it.Target)
	}

	goneBytes, _ := os.ReadFile(v.MustPath(agents.FactPath("lyra", enGone)))
	keptBefore, _ := os.ReadFile(v.MustPath(agents.FactPath("lyra", enKeep)))
	beforeApprove := treeSums(t, v)
	approveAt := now.Add(time.Hour)
	done, err := retention.Approve(v, enID, retention.Decision{By: "person", Now: approveAt})
	if err != nil {
		t.Fatal(err)
	}
	dst := "review/archive/facts/lyra/" + enGone + "." + approveAt.Format("20060102T150405Z") + ".md"
	if got, err := os.ReadFile(v.MustPath(dst)); err != nil || string(got) != string(goneBytes) {
		t.Errorf("the merged-away fact is not archived byte for byte at %s: %v", dst, err)
	}
	if !strings.Contains(done.Result, dst) {
		t.Errorf("result %q lacks %s", done.Result, dst)
	}
	if exists(v, agents.FactPath("lyra", enGone)) {
		t.Error("the merged-away fact is still in memory/")
	}
	kept, err := agents.ReadFact(v, "lyra", enKeep)
	if err != nil {
		t.Fatal(err)
	}
	// Every line of the other was in the kept fact already: it keeps
	// every byte.
	if got, _ := os.ReadFile(v.MustPath(kept.Path)); string(got) != string(keptBefore) {
		t.Errorf("kept fact rewritten although nothing was added:\n%s", got)
	}
	index, _ := os.ReadFile(v.MustPath(agents.HomePath("lyra", agents.IndexFile)))
	if strings.Contains(string(index), "[["+enGone+"|") || !strings.Contains(string(index), "[["+enKeep+"|") {
		t.Errorf("INDEX.md not updated:\n%s", index)
	}
	mem, _ := os.ReadFile(v.MustPath(agents.HomePath("lyra", agents.MemoryFile)))
	if !strings.Contains(string(mem), "[["+enKeep+"]]") || strings.Contains(string(mem), "[["+enGone+"]]") {
		t.Errorf("MEMORY.md not relinked:\n%s", mem)
	}

	// Rollback of the approval restores every byte; approving again works
	// (the earlier approval's record does not pass for a landed change).
	if _, err := retention.Rollback(v, "", approveAt); err != nil {
		t.Fatal(err)
	}
	if d := diffSums(beforeApprove, treeSums(t, v)); len(d) > 0 {
		t.Fatalf("rollback of the approval left: %v", d)
	}
	if _, err := retention.Approve(v, enID, retention.Decision{By: "person", Now: approveAt}); err != nil {
		t.Fatal(err)
	}
	if exists(v, agents.FactPath("lyra", enGone)) || !exists(v, dst) {
		t.Fatal("the second approval did not apply the merge")
	}
	// The Korean merge, approved: the newest is kept with the other's
	// distinct line ("제목은 영어로.") appended.
	koAt := approveAt.Add(time.Hour)
	if _, err := retention.Approve(v, byKeep[koKeep], retention.Decision{By: "person", Now: koAt}); err != nil {
		t.Fatal(err)
	}
	ko, err := agents.ReadFact(v, "lyra", koKeep)
	if err != nil {
		t.Fatal(err)
	}
	if want := mergeFacts[3].Body + "\n\nMerged from \"PR 설명 언어\" (curator, " + fmtDay(now) + "):\n" + mergeFacts[2].Body; ko.Body != want {
		t.Errorf("Korean kept body:\n%s\nwant:\n%s", ko.Body, want)
	}
	// Rolling back the pass's snapshot undoes the pass and both approvals.
	if _, err := retention.Rollback(v, res.Snapshot, koAt); err != nil {
		t.Fatal(err)
	}
	if d := diffSums(before, without(treeSums(t, v), vault.CuratorDir)); len(d) > 0 {
		t.Fatalf("rollback of the pass left: %v", d)
	}
}

// TestCuratorMergeRejectAndRefusals: a rejected merge is not proposed
// again while its facts are unchanged; an approval after a fact changed
// or was pinned is refused with a clear message and changes nothing; a
// pinned fact may be kept but is never merged away; the quarter rule
// holds.
func TestCuratorMergeRejectAndRefusals(t *testing.T) {
	v, slugs := mergeVault(t)
	now := t0.Add(5 * day)
	if _, err := Run(v, PassOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	plans := mergePlans(t, v)
	var enID, koID string
	for id, p := range plans {
		if p.Keep.Slug == slugs["Deployment sequence"] {
			enID = id
		} else {
			koID = id
		}
	}
	if enID == "" || koID == "" {
		t.Fatalf("plans %+v", plans)
	}

	// A person tags the merged-away fact in Obsidian: approval refuses.
	gone := v.MustPath(agents.FactPath("lyra", slugs["Deploy order"]))
	data, _ := os.ReadFile(gone)
	if err := os.WriteFile(gone, []byte(strings.Replace(string(data), "\n---\n", "\ntags: deploy\n---\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeSums(t, v)
	_, err := retention.Approve(v, enID, retention.Decision{By: "person", Now: now.Add(time.Hour)})
	if !errors.Is(err, retention.ErrApply) || !strings.Contains(err.Error(), "fact "+slugs["Deploy order"]+" changed since the proposal") {
		t.Fatalf("approve after an edit: %v", err)
	}
	if d := diffSums(before, treeSums(t, v)); len(d) != 1 || d[0] != "changed or gone: "+retention.PendingPath(enID) {
		t.Errorf("a refused approval changed more than the item's error line: %v", d)
	}
	if it, _ := retention.Get(v, enID); it.Status != retention.StatusPending || !strings.Contains(it.Error, "changed since the proposal") {
		t.Errorf("refused item: %q %q", it.Status, it.Error)
	}
	if _, err := retention.Reject(v, enID, retention.Decision{By: "person", Why: "stale proposal", Now: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}

	// Pinning the merged-away Korean fact after the proposal: refused too.
	if _, _, err := agents.PinFact(v, "lyra", slugs["PR 설명 언어"], true); err != nil {
		t.Fatal(err)
	}
	if _, err := retention.Approve(v, koID, retention.Decision{By: "person", Now: now.Add(time.Hour)}); err == nil || !strings.Contains(err.Error(), "changed since the proposal") {
		t.Fatalf("approve after a pin: %v", err)
	}
	if !exists(v, agents.FactPath("lyra", slugs["PR 설명 언어"])) {
		t.Fatal("a refused merge archived a fact")
	}
	if _, err := retention.Reject(v, koID, retention.Decision{By: "person", Why: "keep both", Now: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}

	// The next pass: the English pair changed since its rejection, so it is
	// proposed again; the Korean pair changed too (the pin), and now the
	// pinned one is kept although it is the older.
	if _, err := Run(v, PassOptions{Now: now.Add(day)}); err != nil {
		t.Fatal(err)
	}
	plans = mergePlans(t, v)
	var koPlan curatorPlan
	for _, p := range plans {
		if p.Keep.Slug == slugs["PR 설명 언어"] {
			koPlan = p
		}
		for _, f := range p.Archive {
			if f.Slug == slugs["PR 설명 언어"] {
				t.Errorf("a pinned fact is merged away: %+v", p)
			}
		}
	}
	if koPlan.Keep == nil || len(plans) != 2 {
		t.Fatalf("second pass merges %+v", plans)
	}
	// Rejected as they are now: the third pass proposes no merge.
	for id := range plans {
		if _, err := retention.Reject(v, id, retention.Decision{By: "person", Why: "no", Now: now.Add(day)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Run(v, PassOptions{Now: now.Add(2 * day)}); err != nil {
		t.Fatal(err)
	}
	if p := mergePlans(t, v); len(p) != 0 {
		t.Errorf("rejected merges proposed again: %+v", p)
	}
}

// TestCuratorMergeQuarterRule: four near-duplicates among five facts
// would archive three; a pass archives at most a quarter (one).
func TestCuratorMergeQuarterRule(t *testing.T) {
	v := mustVault(t)
	for i, n := range []string{"Deploy order A", "Deploy order B", "Deploy order C", "Deploy order D"} {
		in := mergeFacts[0]
		in.Name = n
		in.Body += strings.Repeat(" Really.", i)
		if _, err := agents.WriteFact(v, "lyra", in, t0.Add(time.Duration(i)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := agents.WriteFact(v, "lyra", mergeFacts[4], t0); err != nil {
		t.Fatal(err)
	}
	if _, err := FactStates(v, "lyra", t0); err != nil {
		t.Fatal(err)
	}
	res, err := Run(v, PassOptions{Now: t0.Add(day)})
	if err != nil {
		t.Fatal(err)
	}
	plans := mergePlans(t, v)
	if len(plans) != 1 {
		t.Fatalf("%d merges", len(plans))
	}
	for _, p := range plans {
		if len(p.Archive) != 1 {
			t.Errorf("a merge archives %d of 5 facts, more than a quarter", len(p.Archive))
		}
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "more than a quarter") }) {
		t.Errorf("notes %v", res.Notes)
	}
	diary, _ := os.ReadFile(filepath.Join(v.Root(), filepath.FromSlash(res.Diary)))
	if !strings.Contains(string(diary), "merge") || !strings.Contains(string(diary), "more than a quarter") {
		t.Errorf("diary:\n%s", diary)
	}
}

// TestJourneyShowsCuratorOutcomes: the journey shows each pass with the
// kinds it proposed, every proposal, its approval or rejection with who
// and why, and what the approval did (the merged-away fact archived).
func TestJourneyShowsCuratorOutcomes(t *testing.T) {
	v, slugs := mergeVault(t)
	now := t0.Add(5 * day)
	res, err := Run(v, PassOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	var enID, koID string
	for id, p := range mergePlans(t, v) {
		if p.Keep.Slug == slugs["Deployment sequence"] {
			enID = id
		} else {
			koID = id
		}
	}
	if _, err := retention.Approve(v, enID, retention.Decision{By: "alice", Now: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := retention.Reject(v, koID, retention.Decision{By: "bob", Why: "two different rules", Now: now.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	evs, err := retention.Journey(v, retention.JourneyOptions{Agent: "lyra", Since: now})
	if err != nil {
		t.Fatal(err)
	}
	has := func(kind string, at time.Time, parts ...string) {
		t.Helper()
		for _, e := range evs {
			if e.Kind == kind && e.Time.Equal(at) && !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(e.Title+" "+e.Path, p) }) {
				return
			}
		}
		t.Errorf("the journey has no %q event at %s with %q:\n%+v", kind, at, parts, evs)
	}
	has(retention.EventCuratorPass, now, res.ID, "2 proposals", "(merge 2)", res.Diary)
	has(retention.EventProposed, now, "merge: merge 2 near-duplicate facts into "+slugs["Deployment sequence"], retention.ArchivePath(enID))
	has(retention.EventApproved, now.Add(time.Hour), "merge: ", "(by alice)", retention.ArchivePath(enID))
	has(retention.EventRejected, now.Add(2*time.Hour), "merge: ", "(by bob: two different rules)", retention.ArchivePath(koID))
	has(retention.EventFactArchived, now.Add(time.Hour), slugs["Deploy order"])
	if len(res.Proposals) != 2 {
		t.Fatalf("proposals %+v", res.Proposals)
	}
}

// TestCuratorRejectedStaysRejected: a spill or promotion a person
// rejected is not proposed again while the pass would propose exactly the
// same change; once the fact changes, its promotion is proposed afresh.
func TestCuratorRejectedStaysRejected(t *testing.T) {
	v := mustVault(t)
	m, err := agents.OpenMemory(v, "lyra", agents.TargetMemory)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		if _, err := m.Apply(agents.Op{Action: agents.ActionAdd, Content: memoryEntry(i, 258)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := agents.WriteFact(v, "lyra", agents.FactInput{Name: "Staging SSH", Description: "port 2222", Type: agents.FactProject, Body: "Staging listens on 2222."}, t0); err != nil {
		t.Fatal(err)
	}
	rec := agents.Recall(v)
	for i, q := range []string{"staging port", "ssh staging", "which port"} {
		at := t0.Add(time.Duration(i+1) * time.Hour)
		p := agents.FactPath("lyra", "staging-ssh")
		rec.Record(agents.RecallEvent{Time: at, Agent: "lyra", Kind: agents.RecallHits, Query: q, Hits: []string{p}})
		rec.Record(agents.RecallEvent{Time: at.Add(time.Second), Agent: "lyra", Kind: agents.RecallRead, Path: p})
	}
	now := t0.Add(day)
	if _, err := Run(v, PassOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	spills := pendingOf(t, v, retention.KindSpill)
	if len(spills) != 1 {
		t.Fatalf("spills %+v", spills)
	}
	if _, err := retention.Reject(v, spills[0].ID, retention.Decision{By: "person", Why: "I keep these", Now: now}); err != nil {
		t.Fatal(err)
	}
	// Nothing moved, so MEMORY.md is still past its threshold and no
	// promotion is proposed; a person makes room by hand, the next pass
	// proposes the promotion, and the person rejects it.
	entries, _ := m.Entries()
	if _, err := m.Apply(agents.Op{Action: agents.ActionRemove, OldText: entries[7]}, agents.Op{Action: agents.ActionRemove, OldText: entries[6]}); err != nil {
		t.Fatal(err)
	}
	res, err := Run(v, PassOptions{Now: now.Add(day)})
	if err != nil {
		t.Fatal(err)
	}
	if s := pendingOf(t, v, retention.KindSpill); len(s) != 0 {
		t.Errorf("spill proposed again after rejection and a change below the threshold: %+v", s)
	}
	proms := pendingOf(t, v, retention.KindPromote)
	if len(proms) != 1 {
		t.Fatalf("promotions %+v (notes %v)", proms, res.Notes)
	}
	if _, err := retention.Reject(v, proms[0].ID, retention.Decision{By: "person", Why: "not in memory", Now: now.Add(day)}); err != nil {
		t.Fatal(err)
	}
	// Back past the threshold with the same entries: the same spill is
	// not proposed again, and the diary says why; the same promotion
	// neither.
	for _, e := range entries[6:] {
		if _, err := m.Apply(agents.Op{Action: agents.ActionAdd, Content: e}); err != nil {
			t.Fatal(err)
		}
	}
	res, err = Run(v, PassOptions{Now: now.Add(2 * day)})
	if err != nil {
		t.Fatal(err)
	}
	if s := pendingOf(t, v, retention.KindSpill); len(s) != 0 {
		t.Errorf("a rejected spill proposed again: %+v", s)
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "a person rejected moving the same entries") }) {
		t.Errorf("notes %v", res.Notes)
	}
	entries, _ = m.Entries()
	if _, err := m.Apply(agents.Op{Action: agents.ActionRemove, OldText: entries[7]}, agents.Op{Action: agents.ActionRemove, OldText: entries[6]}); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(v, PassOptions{Now: now.Add(3 * day)}); err != nil {
		t.Fatal(err)
	}
	if p := pendingOf(t, v, retention.KindPromote); len(p) != 0 {
		t.Errorf("a rejected promotion proposed again: %+v", p)
	}
	// The fact changes: its promotion is a new proposal.
	if _, err := agents.WriteFact(v, "lyra", agents.FactInput{Name: "Staging SSH", Description: "port 2222", Type: agents.FactProject, Body: "Staging listens on 2222 (ssh -p 2222).", Update: true}, now.Add(3*day)); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(v, PassOptions{Now: now.Add(4 * day)}); err != nil {
		t.Fatal(err)
	}
	if p := pendingOf(t, v, retention.KindPromote); len(p) != 1 {
		t.Errorf("the changed fact's promotion: %+v", p)
	}
}

// TestCuratorPassesInOneSecond: two passes within the same second keep
// two diaries, and the journey shows both.
func TestCuratorPassesInOneSecond(t *testing.T) {
	v := mustVault(t)
	a, err := Run(v, PassOptions{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(v, PassOptions{Now: t0.Add(300 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if a.ID == b.ID || a.Diary == b.Diary || !exists(v, a.Diary) || !exists(v, b.Diary) {
		t.Fatalf("passes %q (%s) and %q (%s)", a.ID, a.Diary, b.ID, b.Diary)
	}
	evs, err := retention.Journey(v, retention.JourneyOptions{Agent: "lyra"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Kind == retention.EventCuratorPass {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d pass events, want 2", n)
	}
}
