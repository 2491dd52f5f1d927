package curator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// curatorPlan is what approving a curator proposal does. It is kept in
// the item's body, in a fenced block a person can read, so that approval
// works on any machine the vault syncs to.
type curatorPlan struct {
	Kind  string `json:"kind"`
	Agent string `json:"agent"`
	Pass  string `json:"pass"`
	// Snapshot is the pass's snapshot; approval adds the files it creates
	// to it, so rolling back to it undoes the pass and its approvals.
	Snapshot string `json:"snapshot,omitempty"`
	// Archive: the facts to move, with the SHA-256 they had when proposed.
	Archive []planFact `json:"archive,omitempty"`
	// Spill and promote: the memory operations on Target, and the facts a
	// spill creates first.
	Target  string             `json:"target,omitempty"`
	Ops     []agents.Op        `json:"ops,omitempty"`
	Facts   []agents.FactInput `json:"facts,omitempty"`
	Promote []string           `json:"promote,omitempty"`
	// Log: a promoted log entry, "PATH#LINE" (agents.LogHit).
	Log []string `json:"log,omitempty"`
	// Merge: the fact kept (with its SHA-256 as proposed) and its body
	// after the merge; the facts merged into it are in Archive; Links are
	// the memory operations that point links to them at the kept fact.
	Keep  *planFact   `json:"keep,omitempty"`
	Body  string      `json:"body,omitempty"`
	Links []planLinks `json:"links,omitempty"`
}

// planLinks are memory operations on one bounded-memory file.
type planLinks struct {
	Target string      `json:"target"`
	Ops    []agents.Op `json:"ops"`
}

type planFact struct {
	Slug   string `json:"slug"`
	SHA256 string `json:"sha256"`
}

const planFence = "```nexus-curator"

// proposalBody renders a proposal for a person: evidence, the exact diff,
// and the plan approval carries out.
func proposalBody(p Proposal) (string, error) {
	plan, err := json.MarshalIndent(p.plan, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode curator plan: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The curator proposes: %s.\n\nApprove or reject it like any review item (`nexus review approve ID`, or set `status: approved` / `rejected` above). Approval applies it through the same code path as a direct write, after a snapshot; `nexus rollback` undoes it.\n\n", p.Summary)
	b.WriteString("## Evidence\n\n")
	for _, e := range p.Evidence {
		fmt.Fprintf(&b, "- %s\n", e)
	}
	b.WriteString("\n## Diff\n\n```diff\n" + p.Diff + "\n```\n\n")
	b.WriteString("## Plan\n\nWhat approval carries out (edit the proposal by rejecting it and writing the change yourself).\n\n")
	b.WriteString(planFence + "\n" + string(plan) + "\n```\n")
	return b.String(), nil
}

// parsePlan finds the plan block in an item's body.
func parsePlan(body string) (curatorPlan, error) {
	var plan curatorPlan
	i := strings.LastIndex(body, planFence+"\n")
	if i < 0 {
		return plan, fmt.Errorf("the curator proposal has no %s block: %w", planFence, vault.ErrInvalid)
	}
	rest := body[i+len(planFence)+1:]
	end := strings.Index(rest, "\n```")
	if end < 0 {
		return plan, fmt.Errorf("the curator proposal's plan block is not closed: %w", vault.ErrInvalid)
	}
	if err := json.Unmarshal([]byte(rest[:end]), &plan); err != nil {
		return plan, fmt.Errorf("the curator proposal's plan is not readable: %v: %w", err, vault.ErrInvalid)
	}
	return plan, plan.check()
}

// check refuses a plan a person's edit (or a sync accident) made unsafe:
// a path outside the agent's home, an unknown target or action.
func (p curatorPlan) check() error {
	bad := func(what string) error {
		return fmt.Errorf("the curator proposal's plan %s; reject it: %w", what, vault.ErrInvalid)
	}
	if err := identity.ValidName(p.Agent); err != nil {
		return bad("names no valid agent")
	}
	facts := p.Archive
	if p.Keep != nil {
		facts = append([]planFact{*p.Keep}, facts...)
	}
	seen := map[string]bool{}
	for _, f := range facts {
		s := f.Slug
		if s == "" || strings.ContainsAny(s, "/\\:\x00") || strings.HasPrefix(s, ".") || !utf8.ValidString(s) || strings.EqualFold(s, "index") || seen[s] {
			return bad(fmt.Sprintf("names the fact %q", s))
		}
		seen[s] = true
	}
	if p.Kind == retention.KindMerge && (p.Keep == nil || len(p.Archive) == 0) {
		return bad("merges no facts")
	}
	targets := []string{p.Target}
	ops := p.Ops
	for _, l := range p.Links {
		if l.Target == "" {
			return bad("names no target for its links")
		}
		targets = append(targets, l.Target)
		ops = append(ops, l.Ops...)
	}
	for _, t := range targets {
		if t == "" {
			continue
		}
		if _, err := agents.ParseTarget(t); err != nil {
			return bad(fmt.Sprintf("names the target %q", t))
		}
	}
	for _, op := range ops {
		switch op.Action {
		case agents.ActionAdd, agents.ActionReplace, agents.ActionRemove:
		default:
			return bad(fmt.Sprintf("holds the action %q", op.Action))
		}
	}
	return nil
}

// touches lists every file approving the plan may change or create
// (vault-relative); an archive's destination is known only at approval,
// which adds it to the snapshots then.
func (p curatorPlan) touches(v *vault.Vault) []string {
	var out []string
	switch p.Kind {
	case retention.KindArchive:
		for _, f := range p.Archive {
			out = append(out, agents.FactPath(p.Agent, f.Slug))
		}
		out = append(out, agents.HomePath(p.Agent, agents.IndexFile))
	case retention.KindMerge:
		if p.Keep != nil {
			out = append(out, agents.FactPath(p.Agent, p.Keep.Slug))
		}
		for _, f := range p.Archive {
			out = append(out, agents.FactPath(p.Agent, f.Slug))
		}
		out = append(out, agents.HomePath(p.Agent, agents.IndexFile))
		for _, l := range p.Links {
			if t, err := agents.ParseTarget(l.Target); err == nil {
				out = append(out, agents.HomePath(p.Agent, t.File()))
			}
		}
	case retention.KindSpill, retention.KindPromote:
		if t, err := agents.ParseTarget(p.Target); err == nil {
			out = append(out, agents.HomePath(p.Agent, t.File()))
		}
		for _, in := range p.Facts {
			if slug, err := agents.Slugify(in.Name); err == nil {
				out = append(out, agents.FactPath(p.Agent, slug))
			}
		}
		if len(p.Facts) > 0 {
			out = append(out, agents.HomePath(p.Agent, agents.IndexFile))
		}
	}
	return out
}

// affected lists the files approving a curator item may change,
// for approve --all's snapshot.
func affected(it retention.Item) []string {
	plan, err := parsePlan(it.Body)
	if err != nil {
		return nil
	}
	plan.Agent = it.Agent
	return plan.touches(nil)
}

// apply carries out an approved curator proposal; the review lock
// is held. It takes a snapshot of every file it may change and create (and
// of the item), re-checks the plan against the files as they are now,
// applies it with agents.RemoveFact / agents.WriteFact /
// agents.Memory.Apply, and on any failure restores the snapshot, so
// nothing is half-applied.
//
// A process killed while applying leaves the approval's marker (see
// [approvalMarker]); the review intent then runs the decision again, which
// first restores the killed attempt's snapshot and applies afresh, or,
// when the marker says the change landed, only archives the item.
func apply(v *vault.Vault, it retention.Item, now time.Time) (string, error) {
	plan, err := parsePlan(it.Body)
	if err != nil {
		return "", err
	}
	if plan.Kind != it.Kind || plan.Agent != it.Agent {
		return "", fmt.Errorf("the plan is for %s of %s but the item is %s of %s: %w", plan.Kind, plan.Agent, it.Kind, it.Agent, vault.ErrInvalid)
	}
	if mk, ok := readMarker(v, it.ID); ok && !mk.Done {
		// A killed attempt: put back what it had changed.
		if _, err := retention.RollbackLocked(v, mk.Snapshot, now); err != nil {
			return "", fmt.Errorf("an earlier approval of %s was interrupted and restoring its snapshot %s failed: %w", it.ID, mk.Snapshot, err)
		}
	}
	paths := append(plan.touches(v), retention.PendingPath(it.ID), retention.ArchivePath(it.ID))
	snap, err := retention.TakeSnapshot(v, "before approving curator proposal "+it.ID, paths, now)
	if err != nil {
		return "", err
	}
	// What approval will create is recorded before it exists, so a
	// rollback of a killed attempt removes it too.
	if err := snap.AddCreated(v, plan.creates(v, now)); err != nil {
		return "", err
	}
	if err := writeMarker(v, it.ID, approvalMarker{Snapshot: snap.ID}); err != nil {
		return "", err
	}
	created, err := carryOut(v, plan, now)
	if err == nil {
		err = snap.AddCreated(v, created)
	}
	if err != nil {
		if _, rerr := retention.RollbackLocked(v, snap.ID, now); rerr != nil {
			return "", fmt.Errorf("%w (and restoring snapshot %s failed: %v)", err, snap.ID, rerr)
		}
		removeMarker(v, it.ID)
		return "", err
	}
	result := strings.Join(created, ", ")
	if err := writeMarker(v, it.ID, approvalMarker{Snapshot: snap.ID, Done: true, Result: result, After: fileSums(v, append(plan.touches(v), created...))}); err != nil {
		return "", err
	}
	if testHookCuratorApplied != nil {
		testHookCuratorApplied()
	}
	// The pass's own snapshot learns what approval created, so rolling
	// back to it undoes the whole pass.
	if plan.Snapshot != "" {
		if ps, err := retention.LoadSnapshot(v, plan.Snapshot); err == nil {
			ps.AddCreated(v, created)
		}
	}
	if testHookCuratorDone != nil {
		testHookCuratorDone()
	}
	return result, nil
}

// testHookCuratorApplied runs once a curator approval's change landed,
// before the pass snapshot learns of it; testHookCuratorStep after each
// file an approval changes; testHookCuratorDone as the approval returns to
// retention, which archives the item. Tests kill the process there.
var testHookCuratorApplied, testHookCuratorStep, testHookCuratorDone func()

func curatorStep() {
	if testHookCuratorStep != nil {
		testHookCuratorStep()
	}
}

// approvalMarker is written (machine-local, beside the review intents)
// while a curator approval changes files, and marked done once it has.
type approvalMarker struct {
	Snapshot string `json:"snapshot"`
	Done     bool   `json:"done,omitempty"`
	Result   string `json:"result,omitempty"`
	// After maps every file the approval changed or created to its
	// SHA-256 once done ("" for a file it removed): the change counts as
	// landed only while the files still hold it (a rollback since undid it).
	After map[string]string `json:"after,omitempty"`
}

func fileSums(v *vault.Vault, paths []string) map[string]string {
	out := map[string]string{}
	for _, rel := range paths {
		out[rel] = ""
		if data, err := vault.ReadFile(v.MustPath(rel)); err == nil {
			sum := sha256.Sum256(data)
			out[rel] = hex.EncodeToString(sum[:])
		}
	}
	return out
}

const markersDir = vault.StateDir + "/curator/approvals"

func markerPath(v *vault.Vault, id string) string { return v.MustPath(markersDir + "/" + id + ".json") }

func readMarker(v *vault.Vault, id string) (approvalMarker, bool) {
	var mk approvalMarker
	data, err := vault.ReadFile(markerPath(v, id))
	if err != nil || json.Unmarshal(data, &mk) != nil || mk.Snapshot == "" {
		return mk, false
	}
	return mk, true
}

func writeMarker(v *vault.Vault, id string, mk approvalMarker) error {
	p := markerPath(v, id)
	if err := vault.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("record curator approval: %w", err)
	}
	data, _ := json.Marshal(mk)
	if err := vault.WriteFile(p, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("record curator approval: %w", err)
	}
	return nil
}

func removeMarker(v *vault.Vault, id string) { vault.Remove(markerPath(v, id)) }

// landed reports whether a curator item's approval already changed
// the files (a process killed before it archived the item), and what it
// wrote.
func landed(v *vault.Vault, it retention.Item) (string, bool) {
	mk, ok := readMarker(v, it.ID)
	if !ok || !mk.Done || len(mk.After) == 0 {
		return "", false
	}
	paths := make([]string, 0, len(mk.After))
	for p := range mk.After {
		if _, err := vault.CleanRel(p); err != nil {
			return "", false
		}
		paths = append(paths, p)
	}
	now := fileSums(v, paths)
	for p, sum := range mk.After {
		if now[p] != sum {
			return "", false
		}
	}
	return mk.Result, true
}

// pruneMarkers removes the markers of items no longer pending.
func pruneMarkers(v *vault.Vault) {
	des, err := vault.ReadDir(v.MustPath(markersDir))
	if err != nil {
		return
	}
	for _, de := range des {
		id := strings.TrimSuffix(de.Name(), ".json")
		if _, err := vault.Lstat(v.MustPath(retention.PendingPath(id))); errors.Is(err, fs.ErrNotExist) && retention.CheckID(id) == nil {
			removeMarker(v, id)
		}
	}
}

// creates lists the files approving the plan will create that touches
// cannot name beforehand: the archived copies.
func (p curatorPlan) creates(v *vault.Vault, now time.Time) []string {
	var out []string
	if p.Kind == retention.KindArchive || p.Kind == retention.KindMerge {
		for _, f := range p.Archive {
			out = append(out, archiveDest(v, p.Agent, f.Slug, now))
		}
	}
	return out
}

func carryOut(v *vault.Vault, plan curatorPlan, now time.Time) ([]string, error) {
	switch plan.Kind {
	case retention.KindArchive:
		for _, f := range plan.Archive {
			data, err := vault.ReadFile(v.MustPath(agents.FactPath(plan.Agent, f.Slug)))
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("fact %s is gone since the proposal; reject it: %w", f.Slug, vault.ErrRefused)
			}
			if err != nil {
				return nil, err
			}
			sum := sha256.Sum256(data)
			if hex.EncodeToString(sum[:]) != f.SHA256 {
				return nil, fmt.Errorf("fact %s changed since the proposal; reject it (the next pass looks again): %w", f.Slug, vault.ErrRefused)
			}
			if agents.FactPinned(data) {
				return nil, fmt.Errorf("fact %s was pinned since the proposal; reject it: %w", f.Slug, vault.ErrRefused)
			}
		}
		var created []string
		for _, f := range plan.Archive {
			dst, err := agents.RemoveFact(v, plan.Agent, f.Slug, now)
			if err != nil {
				return created, err
			}
			created = append(created, dst)
			curatorStep()
		}
		return created, nil
	case retention.KindMerge:
		return carryOutMerge(v, plan, now)
	case retention.KindSpill, retention.KindPromote:
		t, err := agents.ParseTarget(plan.Target)
		if err != nil {
			return nil, err
		}
		m, err := agents.OpenMemory(v, plan.Agent, t, agents.WithClock(func() time.Time { return now }))
		if err != nil {
			return nil, err
		}
		if res, err := m.Check(plan.Ops...); err != nil {
			return nil, fmt.Errorf("%s changed since the proposal: %s: %w", m.Path(), res.Error, err)
		}
		var created []string
		for _, in := range plan.Facts {
			if _, err := agents.ReadFact(v, plan.Agent, in.Name); err == nil {
				return created, fmt.Errorf("a fact named %q exists since the proposal; reject it (the next pass picks another name): %w", in.Name, vault.ErrRefused)
			}
			f, err := agents.WriteFact(v, plan.Agent, in, now)
			if err != nil {
				return created, err
			}
			created = append(created, f.Path)
			curatorStep()
		}
		res, err := m.Apply(plan.Ops...)
		if err != nil {
			return created, fmt.Errorf("%w: %s", err, res.Error)
		}
		if res.Backup != "" {
			created = append(created, res.Backup)
		}
		return append(created, m.Path()), nil
	}
	return nil, fmt.Errorf("curator proposals of kind %q cannot be applied by this version: %w", plan.Kind, vault.ErrInvalid)
}

// checkFact re-reads a fact named in a plan: it must be there with the
// bytes it had when proposed.
func checkFact(v *vault.Vault, agent string, f planFact) ([]byte, error) {
	data, err := vault.ReadFile(v.MustPath(agents.FactPath(agent, f.Slug)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("fact %s is gone since the proposal; reject it: %w", f.Slug, vault.ErrRefused)
	}
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != f.SHA256 {
		return nil, fmt.Errorf("fact %s changed since the proposal; reject it (the next pass looks again): %w", f.Slug, vault.ErrRefused)
	}
	return data, nil
}

// carryOutMerge re-reads every fact of a merge (each must be as proposed,
// and none merged away may be pinned since), checks the link changes
// against MEMORY.md/USER.md as they are now, and only then writes the kept
// fact's merged body (agents.WriteFact, as 'nexus fact write --update'),
// archives the others (agents.RemoveFact, as 'nexus fact remove') and
// applies the link changes (agents.Memory.Apply).
func carryOutMerge(v *vault.Vault, plan curatorPlan, now time.Time) ([]string, error) {
	data, err := checkFact(v, plan.Agent, *plan.Keep)
	if err != nil {
		return nil, err
	}
	keep, err := agents.ParseFact(plan.Keep.Slug, data)
	if err != nil {
		return nil, err
	}
	for _, f := range plan.Archive {
		data, err := checkFact(v, plan.Agent, f)
		if err != nil {
			return nil, err
		}
		if agents.FactPinned(data) {
			return nil, fmt.Errorf("fact %s was pinned since the proposal, and a merge never archives a pinned fact; reject it: %w", f.Slug, vault.ErrRefused)
		}
	}
	mems := make([]*agents.Memory, len(plan.Links))
	for i, l := range plan.Links {
		t, err := agents.ParseTarget(l.Target)
		if err != nil {
			return nil, err
		}
		if mems[i], err = agents.OpenMemory(v, plan.Agent, t, agents.WithClock(func() time.Time { return now })); err != nil {
			return nil, err
		}
		if res, err := mems[i].Check(l.Ops...); err != nil {
			return nil, fmt.Errorf("%s changed since the proposal: %s: %w", mems[i].Path(), res.Error, err)
		}
	}
	var created []string
	if plan.Body != keep.Body {
		if _, err := agents.WriteFact(v, plan.Agent, agents.FactInput{Name: keep.Name, Description: keep.Description, Type: keep.Type, Body: plan.Body, Update: true}, now); err != nil {
			return nil, err
		}
		curatorStep()
	}
	for _, f := range plan.Archive {
		dst, err := agents.RemoveFact(v, plan.Agent, f.Slug, now)
		if err != nil {
			return created, err
		}
		created = append(created, dst)
		curatorStep()
	}
	for i, l := range plan.Links {
		res, err := mems[i].Apply(l.Ops...)
		if err != nil {
			return created, fmt.Errorf("%w: %s", err, res.Error)
		}
		if res.Backup != "" {
			created = append(created, res.Backup)
		}
		curatorStep()
	}
	return append(created, agents.FactPath(plan.Agent, plan.Keep.Slug)), nil
}
