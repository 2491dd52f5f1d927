package curator

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/internal/scan"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// PassOptions tune one curator pass.
type PassOptions struct {
	// Now is the pass's clock (default time.Now).
	Now time.Time
	// DryRun computes the proposals and writes nothing: no snapshot, no
	// review items, no diary.
	DryRun bool
	// Agent limits the pass to one agent ("" = every agent).
	Agent string
	// Auto is a pass started by serve/watch: it runs only when one
	// interval (curator every_hours) has passed since the curator first
	// saw the vault and since the last pass.
	Auto bool
}

// Proposal is one curator proposal, filed as a review item.
type Proposal struct {
	// ID is the review item's id ("" in a dry run).
	ID      string `json:"id,omitempty"`
	Kind    string `json:"kind"`
	Agent   string `json:"agent"`
	Summary string `json:"summary"`
	// Evidence says why: counts, dates, queries.
	Evidence []string `json:"evidence"`
	// Diff is exactly what approval changes.
	Diff string `json:"diff"`
	plan curatorPlan
}

// PassResult reports a pass.
type PassResult struct {
	ID       string    `json:"id"`
	Time     time.Time `json:"time"`
	DryRun   bool      `json:"dry_run"`
	Snapshot string    `json:"snapshot,omitempty"`
	Diary    string    `json:"diary,omitempty"`
	Ran      bool      `json:"ran"`
	Skipped  string    `json:"skipped,omitempty"`
	Agents   []string  `json:"agents"`
	Notes    []string  `json:"notes"`
	// Proposals are what the pass filed (or would file).
	Proposals []Proposal `json:"proposals"`
}

// maxPromotesPerPass bounds promote proposals per agent and pass.
const maxPromotesPerPass = 3

// Run runs one curator pass: it reads the recall signals, works out
// for every agent which facts are due for archive, which bounded-memory
// file should spill into facts and which facts are worth promoting, takes
// a snapshot of every file those proposals would change, files each as a
// review item, and writes a diary note. Nothing is applied: a person
// decides each proposal. Passes are serialised across processes.
func Run(v *vault.Vault, o PassOptions) (PassResult, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	o.Now = o.Now.UTC()
	res := PassResult{ID: "c-" + o.Now.Format("20060102T150405Z"), Time: o.Now.Truncate(time.Second), DryRun: o.DryRun, Notes: []string{}, Proposals: []Proposal{}}
	lockCtx := context.Background()
	if o.Auto {
		var cancel context.CancelFunc
		lockCtx, cancel = context.WithTimeout(lockCtx, 50*time.Millisecond)
		defer cancel()
	}
	if !o.DryRun {
		unlock, err := v.LockContext(lockCtx, "curator")
		if err != nil {
			if o.Auto {
				res.Skipped = "another pass is running"
				return res, nil
			}
			return res, err
		}
		defer unlock()
	}
	if !o.DryRun {
		// A pass killed after filing its proposals left no diary: write
		// it now, before this pass picks its id.
		finished, err := finishInterrupted(v)
		if err != nil {
			return res, err
		}
		for _, id := range finished {
			res.Notes = append(res.Notes, "completed the diary of pass "+id+", which was interrupted after filing its proposals")
		}
	}
	if !o.DryRun {
		// Two passes within one second get distinct ids (and diaries).
		for i, base := 2, res.ID; ; i++ {
			if _, err := vault.Lstat(v.MustPath(vault.CuratorDir + "/" + res.ID + ".md")); err != nil {
				break
			}
			res.ID = fmt.Sprintf("%s-%d", base, i)
		}
	}
	st, err := loadCuratorState(v, o.Now)
	if err != nil {
		return res, err
	}
	rec, err := agents.LoadRecall(v)
	if err != nil {
		return res, err
	}
	cfg := v.Config().Curator
	installed := installedAt(st, rec)
	if o.Auto {
		if due := installed.Add(cfg.Every()); o.Now.Before(due) {
			res.Skipped = "the first pass waits one interval after install, until " + due.Format(time.RFC3339) + ", so a person can pin facts first"
			return res, nil
		}
		if due := st.LastPass.Add(cfg.Every()); o.Now.Before(due) {
			res.Skipped = "the next pass is due " + due.Format(time.RFC3339)
			return res, nil
		}
	}
	names, err := curatedAgents(v, o.Agent)
	if err != nil {
		return res, err
	}
	pending, err := retention.List(v, retention.Filter{Agent: o.Agent})
	if err != nil {
		return res, err
	}
	rejected, rejectedMerges := rejectedProposals(v)
	pruneMarkers(v)
	res.Ran = true
	res.Agents = names
	for _, a := range names {
		props, notes, err := planAgent(v, a, rec, installed, o.Now, pending, rejected, rejectedMerges)
		if err != nil {
			return res, err
		}
		for i := range props {
			props[i].plan.Pass = res.ID
		}
		res.Proposals = append(res.Proposals, props...)
		res.Notes = append(res.Notes, notes...)
	}
	if o.DryRun {
		return res, nil
	}
	if len(res.Proposals) > 0 {
		var paths []string
		for _, p := range res.Proposals {
			paths = append(paths, p.plan.touches(v)...)
		}
		snap, err := retention.TakeSnapshot(v, PassSnapshotReason+res.ID, paths, o.Now)
		if err != nil {
			return res, err
		}
		res.Snapshot = snap.ID
		var created []string
		for i := range res.Proposals {
			p := &res.Proposals[i]
			p.plan.Snapshot = snap.ID
			it, err := stageProposal(v, *p, o.Now)
			if err != nil {
				return res, err
			}
			p.ID = it.ID
			created = append(created, retention.PendingPath(it.ID), retention.ArchivePath(it.ID))
		}
		if err := snap.AddCreated(v, created); err != nil {
			return res, err
		}
	}
	if testHookBeforeDiary != nil {
		testHookBeforeDiary()
	}
	diary, err := writeDiary(v, res)
	if err != nil {
		return res, err
	}
	res.Diary = diary
	st.LastPass, st.LastID = o.Now, res.ID
	return res, saveCuratorState(v, st)
}

// rejectedProposals reads the rejected curator items in review/archive/.
// archives maps "agent/slug" to the latest time a person rejected
// archiving that fact: a fact is proposed again only if it was not used
// since... and archive_days passed again after the rejection. merges holds
// the [mergeKey] of every rejected merge (the same facts, unchanged, are
// not proposed for a merge again) and the [opsKey] of every rejected spill
// and promotion (the same change is not proposed again).
func rejectedProposals(v *vault.Vault) (archives map[string]time.Time, merges map[string]bool) {
	out := map[string]time.Time{}
	merges = map[string]bool{}
	des, err := vault.ReadDir(v.MustPath(vault.ArchiveDir))
	if err != nil {
		return out, merges
	}
	for _, de := range des {
		if !de.Type().IsRegular() || !strings.HasSuffix(de.Name(), ".md") {
			continue
		}
		data, err := vault.ReadFile(filepath.Join(v.MustPath(vault.ArchiveDir), de.Name()))
		if err != nil || !strings.Contains(string(data), "source: curator") {
			continue
		}
		it, err := retention.ParseItem(strings.TrimSuffix(de.Name(), ".md"), data)
		if err != nil || !isCuratorKind(it.Kind) || it.Status != retention.StatusRejected {
			continue
		}
		plan, err := parsePlan(it.Body)
		if err != nil {
			continue
		}
		switch it.Kind {
		case retention.KindMerge:
			merges[mergeKey(it.Agent, plan)] = true
			continue
		case retention.KindSpill, retention.KindPromote:
			merges[opsKey(it.Kind, it.Agent, plan)] = true
			for _, l := range plan.Log {
				merges["promote-log/"+it.Agent+"/"+l] = true // a log entry never changes: never again
			}
			continue
		}
		for _, f := range plan.Archive {
			k := it.Agent + "/" + f.Slug
			if it.DecidedAt.After(out[k]) {
				out[k] = it.DecidedAt
			}
		}
	}
	return out, merges
}

// opsKey names a spill or promotion by the memory change it makes.
func opsKey(kind, agent string, plan curatorPlan) string {
	ops, _ := json.Marshal(plan.Ops)
	return kind + "/" + agent + "/" + plan.Target + "/" + string(ops)
}

// planAgent works out one agent's proposals.
func planAgent(v *vault.Vault, agent string, rec *agents.RecallSummary, installed, now time.Time, pending []retention.Item, rejected map[string]time.Time, rejectedMerges map[string]bool) ([]Proposal, []string, error) {
	var props []Proposal
	var notes []string
	waiting := map[string]bool{} // kinds (and targets) already waiting
	inArchive := map[string]bool{}
	for _, it := range pending {
		if it.Agent != agent || !isCuratorKind(it.Kind) {
			continue
		}
		waiting[it.Kind+":"+it.Target] = true
		if plan, err := parsePlan(it.Body); err == nil {
			for _, f := range plan.Archive {
				inArchive[f.Slug] = true
			}
			if plan.Keep != nil {
				inArchive[plan.Keep.Slug] = true // a merge waits on it
			}
			for _, s := range plan.Promote {
				waiting["promote:"+s] = true
			}
			for _, s := range plan.Log {
				waiting["promote-log:"+s] = true
			}
		}
	}
	facts, err := factStates(v, agent, rec, installed, now)
	if err != nil {
		return nil, nil, err
	}
	cfg := v.Config().Curator

	// Archive: facts due, least recently used first, at most a quarter
	// (together with the facts merges archive).
	quota := len(facts) / 4
	var due []FactState
	for _, f := range facts {
		if f.State != StateArchive || inArchive[f.Slug] {
			continue
		}
		if r, ok := rejected[agent+"/"+f.Slug]; ok && now.Sub(latest(r, f.LastUse)) < time.Duration(cfg.ArchiveDays())*24*time.Hour {
			continue // a person said keep it; ask again only after another full period
		}
		due = append(due, f)
	}
	if len(due) > 0 {
		limit := len(facts) / 4
		if len(due) > limit {
			notes = append(notes, fmt.Sprintf("%s: %d facts are due for archive, but a pass proposes at most a quarter of an agent's %d facts (%d); the rest wait for the next pass", agent, len(due), len(facts), limit))
			due = due[:limit]
		}
		if len(due) > 0 {
			props = append(props, archiveProposal(agent, due, now, cfg.ArchiveDays()))
		}
	}
	quota -= len(due)

	// Merge: near-duplicate facts, none of them waiting in another
	// proposal or about to be proposed for archive.
	skip := maps.Clone(inArchive)
	for _, f := range due {
		skip[f.Slug] = true
	}
	groups, sims := mergeGroups(v, agent, facts, skip)
	nMerge := 0
	for _, g := range groups {
		if rejectedMerges[groupKey(agent, g)] {
			continue // a person said no to exactly these files
		}
		if nMerge >= maxMergesPerPass {
			notes = append(notes, fmt.Sprintf("%s: more near-duplicate facts (%s) wait for the next pass (at most %d merges a pass)", agent, groupSlugs(g), maxMergesPerPass))
			continue
		}
		if len(g)-1 > quota {
			notes = append(notes, fmt.Sprintf("%s: facts %s say nearly the same thing, but merging them would archive more than a quarter of the agent's %d facts in one pass; they wait for the next pass", agent, groupSlugs(g), len(facts)))
			if quota < 1 {
				continue
			}
			g = g[:quota+1]
		}
		prop, note := mergeProposal(v, agent, g, sims, now)
		if note != "" {
			notes = append(notes, note)
		}
		if prop != nil {
			props = append(props, *prop)
			quota -= len(g) - 1
			nMerge++
		}
	}

	// Spill: a file at or past its threshold, with no spill waiting.
	for _, t := range []agents.Target{agents.TargetMemory, agents.TargetUser} {
		p, m, err := pressure(v, agent, t)
		if err != nil {
			return nil, nil, err
		}
		if !p.Over {
			continue
		}
		if waiting[retention.KindSpill+":"+string(t)] {
			notes = append(notes, fmt.Sprintf("%s: %s is at %s; a spill proposal already waits for review", agent, t.File(), p.Usage))
			continue
		}
		prop, note, err := spillProposal(v, agent, m, rec, len(facts))
		if err != nil {
			return nil, nil, err
		}
		if prop != nil && rejectedMerges[opsKey(retention.KindSpill, agent, prop.plan)] {
			notes = append(notes, fmt.Sprintf("%s: %s is at %s; a person rejected moving the same entries (%s), so it is not proposed again; consolidate it by hand or raise pressure_percent", agent, t.File(), p.Usage, prop.Summary))
			continue
		}
		if note != "" {
			notes = append(notes, note)
		}
		if prop != nil {
			props = append(props, *prop)
		}
	}

	// Promote: facts read after searches often, from several queries.
	mp, m, err := pressure(v, agent, agents.TargetMemory)
	if err != nil {
		return nil, nil, err
	}
	entries, err := m.Entries()
	if err != nil {
		return nil, nil, err
	}
	room := mp.Limit*cfg.PressurePercent()/100 - mp.Chars
	n := 0
	for _, f := range facts {
		if n >= maxPromotesPerPass || mp.Over {
			break
		}
		if f.Use.SearchReads < cfg.PromoteRecalls() || len(f.Use.Queries) < cfg.PromoteQueries() || waiting["promote:"+f.Slug] || mentions(entries, f.Slug) {
			continue
		}
		prop, note := promoteProposal(v, agent, f, m, room)
		if prop != nil && rejectedMerges[opsKey(retention.KindPromote, agent, prop.plan)] {
			continue // a person rejected this very entry; a changed fact is proposed afresh
		}
		if note != "" {
			notes = append(notes, note)
		}
		if prop != nil {
			props = append(props, *prop)
			room -= utf8.RuneCountInString(prop.plan.Ops[0].Content) + 3
			n++
		}
	}
	notes = append(notes, promoteLogs(v, agent, rec, m, entries, &room, &n, mp.Over, waiting, rejectedMerges, &props)...)
	return props, notes, nil
}

// mentions reports whether some entry already names the fact.
func mentions(entries []string, slug string) bool {
	for _, e := range entries {
		if strings.Contains(e, "[["+slug+"]]") || strings.Contains(e, "[["+slug+"|") {
			return true
		}
	}
	return false
}

func fmtDay(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02")
}

func useEvidence(u agents.Use) string {
	s := fmt.Sprintf("%d reads (last %s), %d after a search (last %s)", u.Reads, fmtDay(u.LastRead), u.SearchReads, fmtDay(u.LastSearchRead))
	if len(u.Queries) > 0 {
		s += ", queries: " + queryList(u.Queries)
	}
	return s
}

func queryList(q map[string]int) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if q[keys[i]] != q[keys[j]] {
			return q[keys[i]] > q[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%q (%d)", k, q[k])
	}
	return strings.Join(parts, ", ")
}

func archiveProposal(agent string, due []FactState, now time.Time, days int) Proposal {
	p := Proposal{Kind: retention.KindArchive, Agent: agent}
	var diff strings.Builder
	names := make([]string, 0, len(due))
	for _, f := range due {
		names = append(names, f.Slug)
		p.plan.Archive = append(p.plan.Archive, planFact{Slug: f.Slug, SHA256: f.sha})
		p.Evidence = append(p.Evidence, fmt.Sprintf("%s: not recalled for %d days (archive after %d); %s; created %s, updated %s; listed in %d session starts",
			f.Slug, f.IdleDays, days, useEvidence(f.Use), fmtDay(f.Created), fmtDay(f.Updated), f.Shown))
		fmt.Fprintf(&diff, "move %s → %s/%s.TIME.md (byte for byte; TIME is when you approve)\n", f.Path, agents.ArchivedFactsDir(agent), f.Slug)
		fmt.Fprintf(&diff, "%s: - %s\n", agents.HomePath(agent, agents.IndexFile), agents.IndexLine(f.Slug, f.Name, factDescription(f.data)))
	}
	p.Summary = fmt.Sprintf("archive %d unused fact(s): %s", len(due), strings.Join(names, ", "))
	p.Diff = strings.TrimRight(diff.String(), "\n")
	p.plan.Kind, p.plan.Agent = retention.KindArchive, agent
	return p
}

func factDescription(data []byte) string {
	f, _ := agents.ParseFact("", data)
	return f.Description
}

// pointerPrefix starts the line a spill leaves in memory for each entry it
// moved (so later passes recognise pointers and never spill them).
const pointerPrefix = "→ fact [["

// The memory index, loaded at every session start, carries the fact's
// name and description, so the pointer can stay this short.
func pointerLine(slug string) string {
	return pointerPrefix + slug + "]] (moved to a fact file; fact_read it)"
}

// spillProposal plans moving the least-used entries of m into fact files,
// with pointers left behind, so the file ends well under its threshold.
func spillProposal(v *vault.Vault, agent string, m *agents.Memory, rec *agents.RecallSummary, nFacts int) (*Proposal, string, error) {
	cfg := v.Config().Curator
	entries, err := m.Entries()
	if err != nil {
		return nil, "", err
	}
	limit := m.Limit()
	chars := agents.CharCount(entries)
	threshold := limit * cfg.PressurePercent() / 100
	goal := limit * max(cfg.PressurePercent()-20, 10) / 100 // room to spare
	type cand struct {
		text string
		use  agents.Use
	}
	var cands []cand
	for _, e := range entries {
		if strings.HasPrefix(e, pointerPrefix) || scan.RuleOf(e) != "" {
			continue // a pointer already, or text that may never leave as a fact
		}
		if utf8.RuneCountInString(e) < 80 {
			continue // a pointer would save too little
		}
		cands = append(cands, cand{e, rec.Entry(m.Path(), agents.EntryID(e))})
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i].use, cands[j].use
		if !a.Last().Equal(b.Last()) {
			return a.Last().Before(b.Last())
		}
		if a.Reads != b.Reads {
			return a.Reads < b.Reads
		}
		return utf8.RuneCountInString(cands[i].text) > utf8.RuneCountInString(cands[j].text)
	})
	maxMove := max(1, len(entries)/4)
	if room := v.Config().MemoryIndexLineLimit - nFacts; room < maxMove {
		maxMove = room
	}
	existing, err := agents.ListFacts(v, agent)
	if err != nil {
		return nil, "", err
	}
	taken := map[string]bool{}
	for _, f := range existing {
		taken[strings.ToLower(f.Name)] = true
		taken["slug:"+f.Slug] = true
	}
	ftype := agents.FactProject
	if m.Target() == agents.TargetUser {
		ftype = agents.FactUser
	}
	p := &Proposal{Kind: retention.KindSpill, Agent: agent}
	p.plan = curatorPlan{Kind: retention.KindSpill, Agent: agent, Target: string(m.Target())}
	after := chars
	var diff strings.Builder
	for _, c := range cands {
		if after <= goal || len(p.plan.Facts) >= maxMove {
			break
		}
		in, ok := spillFact(c.text, ftype, taken)
		if !ok {
			continue
		}
		slug, _ := agents.Slugify(in.Name)
		ptr := pointerLine(slug)
		ops := append(append([]agents.Op(nil), p.plan.Ops...), agents.Op{Action: agents.ActionReplace, OldText: c.text, Content: ptr})
		if _, err := m.Check(ops...); err != nil {
			continue // ambiguous (the entry is inside another) or otherwise refused
		}
		taken[strings.ToLower(in.Name)], taken["slug:"+slug] = true, true
		p.plan.Ops, p.plan.Facts = ops, append(p.plan.Facts, in)
		after += utf8.RuneCountInString(ptr) - utf8.RuneCountInString(c.text)
		p.Evidence = append(p.Evidence, fmt.Sprintf("entry #%s (%d chars): %s", agents.EntryID(c.text), utf8.RuneCountInString(c.text), useEvidence(c.use)))
		fmt.Fprintf(&diff, "%s:\n%s\n%s\n", m.Path(), prefixLines("- ", c.text), prefixLines("+ ", ptr))
		fmt.Fprintf(&diff, "%s (new):\n%s\n", agents.FactPath(agent, slug), prefixLines("+ ", factPreview(in)))
	}
	if len(p.plan.Facts) == 0 {
		return nil, fmt.Sprintf("%s: %s is at %s but no entry can move to a fact (entries are short, pointers already, or fail the scan); consolidate it by hand", agent, m.Target().File(), agents.FormatUsage(chars, limit)), nil
	}
	noun := "entries"
	if len(p.plan.Facts) == 1 {
		noun = "entry"
	}
	p.Summary = fmt.Sprintf("move %d %s of %s into fact files: %s → %s", len(p.plan.Facts), noun, m.Target().File(),
		agents.FormatUsage(chars, limit), agents.FormatUsage(after, limit))
	p.Evidence = append([]string{fmt.Sprintf("%s is at %s, past the %d%% threshold; after approval %s (threshold %d chars); the least-used entries move, at most a quarter of its %d entries",
		m.Target().File(), agents.FormatUsage(chars, limit), cfg.PressurePercent(), agents.FormatUsage(after, limit), threshold, len(entries))}, p.Evidence...)
	note := ""
	if after >= threshold {
		note = fmt.Sprintf("%s: the spill of %s moves as much as a pass may and still leaves it at %s; the next pass continues", agent, m.Target().File(), agents.FormatUsage(after, limit))
	}
	p.Diff = strings.TrimRight(diff.String(), "\n")
	return p, note, nil
}

// spillFact makes the fact an entry moves into: its first line (cut to a
// word) as the name, made unique among taken names.
func spillFact(entry, ftype string, taken map[string]bool) (agents.FactInput, bool) {
	first := strings.TrimSpace(strings.TrimLeft(strings.SplitN(entry, "\n", 2)[0], "#-* "))
	name := first
	if r := []rune(name); len(r) > 40 {
		cut := string(r[:40])
		if i := strings.LastIndex(cut, " "); i > 15 {
			cut = cut[:i]
		}
		name = strings.TrimRight(cut, " ,.;:") + "…"
	}
	if _, err := agents.Slugify(name); err != nil {
		name = "memory note " + agents.EntryID(entry)
	}
	base := name
	for i := 2; ; i++ {
		slug, _ := agents.Slugify(name)
		if !taken[strings.ToLower(name)] && !taken["slug:"+slug] {
			break
		}
		name = fmt.Sprintf("%s (%d)", base, i)
	}
	desc := first
	if r := []rune(desc); len(r) > 200 {
		desc = string(r[:199]) + "…"
	}
	in, err := agents.FactInput{Name: name, Description: desc, Type: ftype, Body: entry, Source: "curator spill of a memory entry"}.Check()
	return in, err == nil
}

func factPreview(in agents.FactInput) string {
	return "name: " + in.Name + "\ndescription: " + in.Description + "\ntype: " + in.Type + "\n\n" + in.Body
}

func prefixLines(prefix, s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// promoteProposal proposes a fact for MEMORY.md: its body when short, else
// its description with a link. The fact is re-read now and the text
// scanned; nothing that fails the scan is proposed.
func promoteProposal(v *vault.Vault, agent string, f FactState, m *agents.Memory, room int) (*Proposal, string) {
	cur, err := agents.ReadFact(v, agent, f.Slug)
	if err != nil {
		return nil, ""
	}
	text := strings.TrimSpace(cur.Body)
	if utf8.RuneCountInString(text) > 200 || strings.Contains(text, "\n§") {
		text = cur.Description + " (fact [[" + f.Slug + "]])"
	} else {
		text += " (fact [[" + f.Slug + "]])"
	}
	if err := scan.Text(text); err != nil {
		return nil, fmt.Sprintf("%s: fact %s qualifies for promotion but its text fails the security scan (%v); not proposed", agent, f.Slug, err)
	}
	if utf8.RuneCountInString(text)+3 > room {
		return nil, fmt.Sprintf("%s: fact %s qualifies for promotion but MEMORY.md has no room under its threshold", agent, f.Slug)
	}
	ops := []agents.Op{{Action: agents.ActionAdd, Content: text}}
	if _, err := m.Check(ops...); err != nil {
		return nil, ""
	}
	p := &Proposal{Kind: retention.KindPromote, Agent: agent, Summary: "add fact " + f.Slug + " to MEMORY.md"}
	p.plan = curatorPlan{Kind: retention.KindPromote, Agent: agent, Target: string(agents.TargetMemory), Ops: ops, Promote: []string{f.Slug}}
	p.Evidence = []string{fmt.Sprintf("%s: recalled after %d searches from %d distinct queries (promote at %d from %d): %s", f.Slug, f.Use.SearchReads, len(f.Use.Queries),
		v.Config().Curator.PromoteRecalls(), v.Config().Curator.PromoteQueries(), useEvidence(f.Use))}
	p.Diff = m.Path() + ":\n" + prefixLines("+ ", text)
	return p, ""
}

// stageProposal files p as a pending review item.
func stageProposal(v *vault.Vault, p Proposal, now time.Time) (retention.Item, error) {
	body, err := proposalBody(p)
	if err != nil {
		return retention.Item{}, err
	}
	target := p.plan.Target
	if p.Kind == retention.KindArchive {
		target = agents.HomePath(p.Agent, agents.FactsDir)
	}
	if p.Kind == retention.KindMerge && p.plan.Keep != nil {
		target = agents.FactPath(p.Agent, p.plan.Keep.Slug)
	}
	prov := retention.Provenance{Agent: p.Agent, Session: p.plan.Pass, Source: "curator"}
	return retention.Stage(v, retention.Item{Agent: p.Agent, Kind: p.Kind, Status: retention.StatusPending, Target: target, Provenance: prov,
		Name: p.Summary, Description: "curator proposal; approve or reject it like any review item", Body: body}, now)
}

// writeDiary writes review/curator/PASS.md: what the pass saw and did, for
// a person reading in Obsidian.
func writeDiary(v *vault.Vault, res PassResult) (string, error) {
	rel := vault.CuratorDir + "/" + res.ID + ".md"
	var b strings.Builder
	counts := map[string]int{}
	kinds := map[string]map[string]int{}
	for _, p := range res.Proposals {
		counts[p.Agent]++
		if kinds[p.Agent] == nil {
			kinds[p.Agent] = map[string]int{}
		}
		kinds[p.Agent][p.Kind]++
	}
	var per, perKind []string
	for _, a := range res.Agents {
		per = append(per, fmt.Sprintf("%s=%d", a, counts[a]))
		var ks []string
		for _, k := range []string{retention.KindArchive, retention.KindSpill, retention.KindPromote, retention.KindMerge} {
			if n := kinds[a][k]; n > 0 {
				ks = append(ks, fmt.Sprintf("%s:%d", k, n))
			}
		}
		if len(ks) > 0 {
			perKind = append(perKind, a+"="+strings.Join(ks, ","))
		}
	}
	fmt.Fprintf(&b, "---\npass: %s\ntime: %q\nsnapshot: %s\nproposals: %d\nagents: %q\nkinds: %q\n---\n", res.ID, res.Time.Format(time.RFC3339), res.Snapshot, len(res.Proposals), strings.Join(per, " "), strings.Join(perKind, " "))
	fmt.Fprintf(&b, "# Curator pass %s\n\n", res.Time.Format("2006-01-02 15:04 UTC"))
	if res.Snapshot != "" {
		fmt.Fprintf(&b, "Snapshot taken first: `%s` (`nexus rollback %s` puts back every file it covers).\n\n", res.Snapshot, res.Snapshot)
	}
	if len(res.Proposals) == 0 {
		b.WriteString("Nothing to propose.\n")
	}
	for _, p := range res.Proposals {
		fmt.Fprintf(&b, "## %s — %s: %s\n\n[[%s]] waits for your review.\n\n", p.Agent, p.Kind, p.Summary, strings.TrimSuffix(retention.PendingPath(p.ID), ".md"))
		for _, e := range p.Evidence {
			fmt.Fprintf(&b, "- %s\n", e)
		}
		b.WriteString("\n")
	}
	if len(res.Notes) > 0 {
		b.WriteString("## Notes\n\n")
		for _, n := range res.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	p, err := v.Path(rel)
	if err != nil {
		return "", err
	}
	if err := vault.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("write curator diary: %w", err)
	}
	if err := vault.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		return "", fmt.Errorf("write curator diary: %w", err)
	}
	return rel, nil
}
