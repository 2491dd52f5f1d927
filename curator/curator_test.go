package curator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
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

const day = 24 * time.Hour

// treeSums maps every file of the vault outside .nexus/ to its SHA-256.
func treeSums(tb testing.TB, v *vault.Vault) map[string]string {
	tb.Helper()
	out := map[string]string{}
	root := v.Root()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".nexus" {
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func diffSums(a, b map[string]string) []string {
	var d []string
	for k, s := range a {
		if b[k] != s {
			d = append(d, "changed or gone: "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, "new: "+k)
		}
	}
	slices.Sort(d)
	return d
}

// distinctFact is a fact whose text shares little with another's, so the
// merge rule leaves it alone.
func distinctFact(name string) agents.FactInput {
	h := sha256.Sum256([]byte(name))
	x := hex.EncodeToString(h[:])
	return agents.FactInput{Name: name, Description: "token " + x[:12], Type: agents.FactFeedback, Body: x[12:40] + " " + x[40:]}
}

func pendingOf(tb testing.TB, v *vault.Vault, kind string) []retention.Item {
	tb.Helper()
	items, err := retention.List(v, retention.Filter{Agent: "lyra"})
	if err != nil {
		tb.Fatal(err)
	}
	var out []retention.Item
	for _, it := range items {
		if it.Kind == kind {
			out = append(out, it)
		}
	}
	return out
}

// TestCuratorStatesOver120Days walks a controlled clock through 120 days:
// facts recalled stay active, facts not recalled turn stale at 30 days and
// are proposed for archive at 90, pinned facts never move, nothing is
// archived until a person approves, and rolling back the approval puts
// back every byte.
func TestCuratorStatesOver120Days(t *testing.T) {
	v := mustVault(t)
	names := []string{"used", "pinned", "idle-a", "idle-b", "busy-1", "busy-2", "busy-3", "busy-4"}
	for _, n := range names {
		if _, err := agents.WriteFact(v, "lyra", distinctFact(n), t0); err != nil {
			t.Fatal(err)
		}
	}
	// The curator starts watching at t0.
	if _, err := FactStates(v, "lyra", t0); err != nil {
		t.Fatal(err)
	}
	if _, changed, err := agents.PinFact(v, "lyra", "pinned", true); err != nil || !changed {
		t.Fatalf("pin: %v %v", changed, err)
	}
	rec := agents.Recall(v)
	recalled := map[string]bool{"used": true, "busy-1": true, "busy-2": true, "busy-3": true, "busy-4": true}
	want := func(slug string, d int) string {
		switch {
		case slug == "pinned":
			return StatePinned
		case recalled[slug] || d < 30:
			return StateActive
		case d < 90:
			return StateStale
		}
		return StateArchive
	}
	var archiveID string
	for d := 0; d <= 120; d++ {
		now := t0.Add(time.Duration(d)*day + time.Hour)
		if d%10 == 0 {
			for s := range recalled {
				rec.Record(agents.RecallEvent{Time: now.Add(-time.Minute), Agent: "lyra", Kind: agents.RecallRead, Path: agents.FactPath("lyra", s)})
			}
		}
		states, err := FactStates(v, "lyra", now)
		if err != nil {
			t.Fatal(err)
		}
		if archiveID == "" && len(states) != len(names) {
			t.Fatalf("day %d: %d facts, want %d", d, len(states), len(names))
		}
		for _, s := range states {
			if got := want(s.Slug, d); s.State != got {
				t.Errorf("day %d: %s is %q, want %q (last use %s)", d, s.Slug, s.State, got, s.LastUse)
			}
		}
		if d == 89 || d == 90 || d == 91 {
			res, err := Run(v, PassOptions{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			arch := pendingOf(t, v, retention.KindArchive)
			switch d {
			case 89:
				if len(arch) != 0 {
					t.Fatalf("day 89: archive proposed early: %+v", arch)
				}
			case 90:
				if len(arch) != 1 || !strings.Contains(arch[0].Name, "idle-a") || !strings.Contains(arch[0].Name, "idle-b") || strings.Contains(arch[0].Name, "pinned") {
					t.Fatalf("day 90: archive proposals %+v", arch)
				}
				if res.Snapshot == "" || res.Diary == "" {
					t.Errorf("pass without snapshot or diary: %+v", res)
				}
				for _, want := range []string{"## Evidence", "not recalled for 90 days", "```diff", "move agents/lyra/memory/idle-a.md", planFence} {
					if !strings.Contains(arch[0].Body, want) {
						t.Errorf("proposal lacks %q:\n%s", want, arch[0].Body)
					}
				}
				archiveID = arch[0].ID
			case 91:
				if len(arch) != 1 {
					t.Fatalf("day 91: the waiting proposal was proposed again: %d", len(arch))
				}
			}
			// Proposed, not archived: every fact file is still there.
			for _, n := range names {
				if _, err := os.Stat(v.MustPath(agents.FactPath("lyra", n))); err != nil {
					t.Fatalf("day %d: %s archived without approval: %v", d, n, err)
				}
			}
		}
		if d == 100 {
			before := treeSums(t, v)
			done, err := retention.Approve(v, archiveID, retention.Decision{By: "person", Now: now})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{"idle-a", "idle-b"} {
				if _, err := os.Stat(v.MustPath(agents.FactPath("lyra", n))); !os.IsNotExist(err) {
					t.Errorf("%s not archived after approval", n)
				}
				if !strings.Contains(done.Result, "review/archive/facts/lyra/"+n+".") {
					t.Errorf("result %q lacks the archived %s", done.Result, n)
				}
			}
			if _, err := retention.Rollback(v, "", now); err != nil {
				t.Fatal(err)
			}
			if d := diffSums(before, treeSums(t, v)); len(d) > 0 {
				t.Fatalf("rollback did not restore every byte: %v", d)
			}
			// Approved for real this time.
			if _, err := retention.Approve(v, archiveID, retention.Decision{By: "person", Now: now}); err != nil {
				t.Fatal(err)
			}
			names = slices.DeleteFunc(names, func(s string) bool { return s == "idle-a" || s == "idle-b" })
		}
	}
	if _, err := os.Stat(v.MustPath(agents.FactPath("lyra", "pinned"))); err != nil {
		t.Errorf("pinned fact moved: %v", err)
	}
}

func TestCuratorQuarterRuleAndRejection(t *testing.T) {
	v := mustVault(t)
	for i := range 8 {
		if _, err := agents.WriteFact(v, "lyra", fact(fmt.Sprintf("old-%d", i)), t0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := FactStates(v, "lyra", t0); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(95 * day)
	res, err := Run(v, PassOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	arch := pendingOf(t, v, retention.KindArchive)
	if len(arch) != 1 {
		t.Fatalf("proposals %+v", arch)
	}
	plan, err := parsePlan(arch[0].Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Archive) != 2 {
		t.Errorf("a pass proposed %d of 8 facts, more than a quarter", len(plan.Archive))
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "at most a quarter") }) {
		t.Errorf("notes do not say what was held back: %v", res.Notes)
	}
	if _, err := retention.Reject(v, arch[0].ID, retention.Decision{By: "person", Why: "keep them", Now: now}); err != nil {
		t.Fatal(err)
	}
	// The next pass proposes two others, not the rejected ones.
	if _, err := Run(v, PassOptions{Now: now.Add(day)}); err != nil {
		t.Fatal(err)
	}
	arch = pendingOf(t, v, retention.KindArchive)
	if len(arch) != 1 {
		t.Fatalf("second pass: %+v", arch)
	}
	plan2, _ := parsePlan(arch[0].Body)
	for _, f := range plan2.Archive {
		for _, g := range plan.Archive {
			if f.Slug == g.Slug {
				t.Errorf("rejected %s proposed again", f.Slug)
			}
		}
	}
}

func TestCuratorAutoPassWaitsOneInterval(t *testing.T) {
	v := mustVault(t)
	res, err := Run(v, PassOptions{Now: t0, Auto: true})
	if err != nil || res.Ran || !strings.Contains(res.Skipped, "first pass waits") {
		t.Fatalf("first auto pass: %+v %v", res, err)
	}
	res, err = Run(v, PassOptions{Now: t0.Add(25 * time.Hour), Auto: true})
	if err != nil || !res.Ran {
		t.Fatalf("auto pass after a day: %+v %v", res, err)
	}
	res, _ = Run(v, PassOptions{Now: t0.Add(26 * time.Hour), Auto: true})
	if res.Ran {
		t.Errorf("a second auto pass within the interval ran")
	}
}

func memoryEntry(i, n int) string {
	s := fmt.Sprintf("Note %d about the staging cluster: ", i)
	for len([]rune(s)) < n {
		s += "deploys roll out in waves, "
	}
	r := []rune(s)[:n]
	r[n-1] = '.'
	return string(r)
}

func TestCuratorSpillAt95Percent(t *testing.T) {
	v := mustVault(t)
	m, err := agents.OpenMemory(v, "lyra", agents.TargetMemory)
	if err != nil {
		t.Fatal(err)
	}
	var entries []string
	for i := range 8 {
		entries = append(entries, memoryEntry(i, 258))
	}
	// 8×258 + 7×3 = 2,085; pad the last to reach 95% of 2,200 (2,090).
	entries[7] = memoryEntry(7, 263)
	for _, e := range entries {
		if _, err := m.Apply(agents.Op{Action: agents.ActionAdd, Content: e}); err != nil {
			t.Fatal(err)
		}
	}
	if res, _ := m.Show(); res.Usage != "95% — 2,090/2,200 chars" {
		t.Fatalf("setup usage %s", res.Usage)
	}
	// The first entry (line 1) is read often: it stays, though without
	// signals it would be among the first to go.
	data, _ := os.ReadFile(v.MustPath(m.Path()))
	rec := agents.Recall(v)
	for range 3 {
		rec.Record(agents.RecallEvent{Time: t0.Add(time.Hour), Agent: "lyra", Kind: agents.RecallRead, Path: m.Path(), Entries: agents.EntryIDsInLines(data, 1, 1)})
	}
	before := treeSums(t, v)
	res, err := Run(v, PassOptions{Now: t0.Add(2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	spills := pendingOf(t, v, retention.KindSpill)
	if len(spills) != 1 {
		t.Fatalf("spill proposals: %+v (notes %v)", spills, res.Notes)
	}
	// Proposed only: memory unchanged, and the agent is told.
	if got := readFile(t, v, m.Path()); got != string(data) {
		t.Fatal("MEMORY.md changed before approval")
	}
	notice := agents.CuratorNotice(v, "lyra", agents.TargetMemory, 2090, 2200)
	if !strings.Contains(notice, spills[0].ID) || !strings.Contains(notice, "95%") {
		t.Errorf("notice = %q", notice)
	}
	prompt, err := agents.RenderSessionStart(v, "lyra")
	if err != nil || !strings.Contains(prompt, notice) {
		t.Errorf("session start lacks the notice %q (%v)", notice, err)
	}
	if _, err := retention.Approve(v, spills[0].ID, retention.Decision{By: "person", Now: t0.Add(3 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	after, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	chars := agents.CharCount(after)
	if chars*100 >= 2200*80 {
		t.Errorf("after approval MEMORY.md is at %s, not under the threshold", agents.FormatUsage(chars, 2200))
	}
	facts, _ := agents.ListFacts(v, "lyra")
	moved := 0
	for _, e := range entries {
		if slices.Contains(after, e) {
			continue
		}
		moved++
		if e == entries[0] {
			t.Errorf("the most-read entry was moved")
		}
		var found *agents.Fact
		for _, f := range facts {
			full, err := agents.ReadFact(v, "lyra", f.Slug)
			if err == nil && full.Body == e {
				found = &full
			}
		}
		if found == nil {
			t.Errorf("moved entry lost: %.40q", e)
			continue
		}
		if !slices.Contains(after, pointerLine(found.Slug)) {
			t.Errorf("no pointer to [[%s]] left in memory: %q", found.Slug, after)
		}
	}
	if moved == 0 || moved > 2 {
		t.Errorf("moved %d entries of 8 (at most a quarter)", moved)
	}
	if agents.CuratorNotice(v, "lyra", agents.TargetMemory, chars, 2200) != "" {
		t.Error("notice still shown after approval")
	}
	// Rolling back the pass's snapshot undoes the pass and the approval.
	if _, err := retention.Rollback(v, res.Snapshot, t0.Add(4*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if d := diffSums(before, treeSums(t, v)); len(d) > 0 {
		for _, p := range d {
			if !strings.HasPrefix(p, "new: "+vault.CuratorDir+"/") { // the diary stays: what happened
				t.Errorf("after rolling back the pass: %s", p)
			}
		}
	}
}

func TestCuratorSpillFailureAppliesNothing(t *testing.T) {
	v := mustVault(t)
	m, _ := agents.OpenMemory(v, "lyra", agents.TargetMemory)
	for i := range 8 {
		if _, err := m.Apply(agents.Op{Action: agents.ActionAdd, Content: memoryEntry(i, 262)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Run(v, PassOptions{Now: t0}); err != nil {
		t.Fatal(err)
	}
	spills := pendingOf(t, v, retention.KindSpill)
	if len(spills) != 1 {
		t.Fatalf("spills %+v", spills)
	}
	plan, _ := parsePlan(spills[0].Body)
	// A person rewrites one of the entries the plan moves.
	if _, err := m.Apply(agents.Op{Action: agents.ActionReplace, OldText: plan.Ops[len(plan.Ops)-1].OldText, Content: "rewritten by hand"}); err != nil {
		t.Fatal(err)
	}
	before := treeSums(t, v)
	_, err := retention.Approve(v, spills[0].ID, retention.Decision{By: "person", Now: t0.Add(time.Hour)})
	if err == nil {
		t.Fatal("approval of a stale spill succeeded")
	}
	after := treeSums(t, v)
	for _, d := range diffSums(before, after) {
		if d != "changed or gone: "+spills[0].Path { // status: pending + error: recorded
			t.Errorf("failed approval changed %s", d)
		}
	}
	it, _ := retention.Get(v, spills[0].ID)
	if it.Status != retention.StatusPending || !strings.Contains(it.Error, "changed since the proposal") {
		t.Errorf("item after failure: status %s, error %q", it.Status, it.Error)
	}
}

func TestCuratorPromote(t *testing.T) {
	v := mustVault(t)
	if _, err := agents.WriteFact(v, "lyra", agents.FactInput{Name: "Staging SSH", Description: "port 2222", Type: agents.FactProject, Body: "Staging listens on 2222."}, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := agents.WriteFact(v, "lyra", agents.FactInput{Name: "VPN", Description: "vpn", Type: agents.FactProject, Body: "Use the office VPN."}, t0); err != nil {
		t.Fatal(err)
	}
	rec := agents.Recall(v)
	search := func(at time.Time, q, slug string) {
		p := agents.FactPath("lyra", slug)
		rec.Record(agents.RecallEvent{Time: at, Agent: "lyra", Kind: agents.RecallHits, Query: q, Hits: []string{p}})
		rec.Record(agents.RecallEvent{Time: at.Add(time.Second), Agent: "lyra", Kind: agents.RecallRead, Path: p})
	}
	search(t0.Add(time.Hour), "staging port", "staging-ssh")
	search(t0.Add(2*time.Hour), "ssh staging", "staging-ssh")
	search(t0.Add(3*time.Hour), "which port", "staging-ssh")
	// Three reads, but from two distinct queries: not enough.
	search(t0.Add(time.Hour), "vpn", "vpn")
	search(t0.Add(2*time.Hour), "VPN", "vpn")
	search(t0.Add(3*time.Hour), "office vpn", "vpn")
	res, err := Run(v, PassOptions{Now: t0.Add(4 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	proms := pendingOf(t, v, retention.KindPromote)
	if len(proms) != 1 || !strings.Contains(proms[0].Name, "staging-ssh") {
		t.Fatalf("promotions %+v (notes %v)", proms, res.Notes)
	}
	if !strings.Contains(proms[0].Body, `"staging port" (1)`) || !strings.Contains(proms[0].Body, "3 distinct queries") {
		t.Errorf("evidence lacks the queries:\n%s", proms[0].Body)
	}
	m, _ := agents.OpenMemory(v, "lyra", agents.TargetMemory)
	if e, _ := m.Entries(); len(e) != 0 {
		t.Fatal("promoted before approval")
	}
	if _, err := retention.Approve(v, proms[0].ID, retention.Decision{By: "person", Now: t0.Add(5 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if e, _ := m.Entries(); len(e) != 1 || e[0] != "Staging listens on 2222. (fact [[staging-ssh]])" {
		t.Errorf("memory after approval: %q", e)
	}
	// Already in memory: not proposed again.
	if _, err := Run(v, PassOptions{Now: t0.Add(6 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if p := pendingOf(t, v, retention.KindPromote); len(p) != 0 {
		t.Errorf("promoted again: %+v", p)
	}
}

func TestCuratorDryRunWritesNothing(t *testing.T) {
	v := mustVault(t)
	m, _ := agents.OpenMemory(v, "lyra", agents.TargetMemory)
	for i := range 8 {
		m.Apply(agents.Op{Action: agents.ActionAdd, Content: memoryEntry(i, 262)})
	}
	if _, err := FactStates(v, "lyra", t0); err != nil { // creates the machine-local state
		t.Fatal(err)
	}
	before := treeSums(t, v)
	res, err := Run(v, PassOptions{Now: t0, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Proposals) == 0 || res.Proposals[0].Kind != retention.KindSpill || res.Proposals[0].Diff == "" {
		t.Errorf("dry run proposals %+v", res.Proposals)
	}
	if d := diffSums(before, treeSums(t, v)); len(d) > 0 {
		t.Errorf("dry run wrote %v", d)
	}
	snaps, _ := retention.ListSnapshots(v)
	if len(snaps) != 0 {
		t.Errorf("dry run took a snapshot")
	}
}

func TestPinFactChangesOnlyThatLine(t *testing.T) {
	v := mustVault(t)
	if _, err := agents.WriteFact(v, "lyra", fact("keep"), t0); err != nil {
		t.Fatal(err)
	}
	p := v.MustPath(agents.FactPath("lyra", "keep"))
	orig, _ := os.ReadFile(p)
	// A person's own keys and CRLF stay.
	withTags := strings.Replace(string(orig), "---\n", "---\ntags: [a, b]\n", 1)
	os.WriteFile(p, []byte(withTags), 0o644)
	if _, changed, err := agents.PinFact(v, "lyra", "keep", true); err != nil || !changed {
		t.Fatal(changed, err)
	}
	pinned, _ := os.ReadFile(p)
	if string(pinned) != strings.Replace(withTags, "\n---\n", "\npinned: true\n---\n", 1) {
		t.Errorf("pinned file:\n%s", pinned)
	}
	if !agents.FactPinned(pinned) {
		t.Error("not pinned")
	}
	if _, changed, _ := agents.PinFact(v, "lyra", "keep", true); changed {
		t.Error("pinning twice changed the file")
	}
	if _, _, err := agents.PinFact(v, "lyra", "keep", false); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != withTags {
		t.Errorf("unpinned file differs:\n%s", got)
	}
}

func TestKeeperRunsCuratorOnlyWhenIdle(t *testing.T) {
	v := mustVault(t)
	if err := v.UpdateConfig(func(c *vault.Config) error { c.Curator.IdleSecondsN = 60; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := FactStates(v, "lyra", t0); err != nil { // installed at t0
		t.Fatal(err)
	}
	m, _ := agents.OpenMemory(v, "lyra", agents.TargetMemory)
	if _, err := m.Apply(agents.Op{Action: agents.ActionAdd, Content: "just written"}); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(25 * time.Hour) // one interval after install: due
	auto := new(Auto)
	auto.Run(v, now, slog.New(slog.DiscardHandler))
	if diaries, _ := os.ReadDir(v.MustPath(vault.CuratorDir)); len(diaries) != 0 {
		t.Fatal("a pass ran right after a write")
	}
	// An hour of quiet.
	old := time.Now().Add(-time.Hour)
	for _, rel := range []string{m.Path(), agents.HomePath("lyra", agents.FactsDir), agents.HomePath("orion", agents.FactsDir), vault.PendingDir} {
		os.Chtimes(v.MustPath(rel), old, old)
	}
	auto.next = time.Time{}
	auto.Run(v, now, slog.New(slog.DiscardHandler))
	diaries, _ := os.ReadDir(v.MustPath(vault.CuratorDir))
	if len(diaries) != 1 {
		t.Fatalf("no pass when idle and due: %v", diaries)
	}
	evs, err := retention.Journey(v, retention.JourneyOptions{Agent: "lyra"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(evs, func(e retention.Event) bool {
		return e.Kind == retention.EventCuratorPass && e.Time.Equal(now.Truncate(time.Second))
	}) {
		t.Errorf("journey lacks the pass: %+v", evs)
	}
}

// FuzzParsePlan: a person may edit a proposal's plan block into anything;
// parsing never panics, and a plan it accepts touches only files in the
// named agent's home.
func FuzzParsePlan(f *testing.F) {
	f.Add("x\n" + planFence + "\n{\"kind\":\"archive\",\"agent\":\"lyra\",\"archive\":[{\"slug\":\"a\"}]}\n```\n")
	f.Add(planFence + "\n{\"kind\":\"archive\",\"agent\":\"lyra\",\"archive\":[{\"slug\":\"../../../etc/passwd\"}]}\n```")
	f.Add(planFence + "\n{\"kind\":\"spill\",\"agent\":\"lyra\",\"target\":\"memory\",\"facts\":[{\"name\":\"../../etc\"}]}\n```")
	f.Add(planFence + "\n{\"kind\":\"merge\",\"agent\":\"lyra\",\"keep\":{\"slug\":\"../../x\"},\"archive\":[{\"slug\":\"b\"}]}\n```")
	f.Add(planFence + "\n{\"kind\":\"merge\",\"agent\":\"lyra\",\"keep\":{\"slug\":\"a\"},\"archive\":[{\"slug\":\"b\"}],\"links\":[{\"target\":\"../x\",\"ops\":[]}]}\n```")
	f.Add("no plan")
	f.Fuzz(func(t *testing.T, body string) {
		plan, err := parsePlan(body)
		if err != nil {
			return
		}
		for _, p := range plan.touches(nil) {
			clean, err := vault.CleanRel(p)
			if err != nil || !strings.HasPrefix(clean, "agents/"+plan.Agent+"/") || strings.Contains(clean, "..") {
				t.Fatalf("accepted plan touches %q (clean %q, %v)", p, clean, err)
			}
		}
	})
}
