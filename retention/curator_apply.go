package retention

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/agents"
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
	return plan, nil
}

// touches lists every file approving the plan may change or create
// (vault-relative); an archive's destination is known only at approval,
// which adds it to the snapshots then.
func (p curatorPlan) touches(v *vault.Vault) []string {
	var out []string
	switch p.Kind {
	case KindArchive:
		for _, f := range p.Archive {
			out = append(out, agents.FactPath(p.Agent, f.Slug))
		}
		out = append(out, agents.HomePath(p.Agent, agents.IndexFile))
	case KindSpill, KindPromote:
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

// curatorAffected lists the files approving a curator item may change,
// for approve --all's snapshot.
func curatorAffected(it Item) []string {
	plan, err := parsePlan(it.Body)
	if err != nil {
		return nil
	}
	plan.Agent = it.Agent
	return plan.touches(nil)
}

// applyCurator carries out an approved curator proposal; the review lock
// is held. It takes a snapshot of every file it may change (and of the
// item), re-checks the plan against the files as they are now, applies it
// with agents.RemoveFact / agents.WriteFact / agents.Memory.Apply, and on
// any failure restores the snapshot, so nothing is half-applied.
func applyCurator(v *vault.Vault, it Item, now time.Time) (string, error) {
	plan, err := parsePlan(it.Body)
	if err != nil {
		return "", err
	}
	if plan.Kind != it.Kind || plan.Agent != it.Agent {
		return "", fmt.Errorf("the plan is for %s of %s but the item is %s of %s: %w", plan.Kind, plan.Agent, it.Kind, it.Agent, vault.ErrInvalid)
	}
	paths := append(plan.touches(v), PendingPath(it.ID), ArchivePath(it.ID))
	snap, err := TakeSnapshot(v, "before approving curator proposal "+it.ID, paths, now)
	if err != nil {
		return "", err
	}
	created, err := carryOut(v, plan, now)
	if err == nil {
		err = snap.addCreated(v, created)
	}
	if err != nil {
		if _, rerr := rollback(v, snap.ID, now); rerr != nil {
			return "", fmt.Errorf("%w (and restoring snapshot %s failed: %v)", err, snap.ID, rerr)
		}
		return "", err
	}
	// The pass's own snapshot learns what approval created, so rolling
	// back to it undoes the whole pass.
	if plan.Snapshot != "" {
		if ps, err := loadSnapshot(v, plan.Snapshot); err == nil {
			ps.addCreated(v, created)
		}
	}
	return strings.Join(created, ", "), nil
}

func carryOut(v *vault.Vault, plan curatorPlan, now time.Time) ([]string, error) {
	switch plan.Kind {
	case KindArchive:
		for _, f := range plan.Archive {
			data, err := os.ReadFile(v.MustPath(agents.FactPath(plan.Agent, f.Slug)))
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
		}
		return created, nil
	case KindSpill, KindPromote:
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
