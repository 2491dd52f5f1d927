package retention

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/internal/scan"
	"github.com/nexus-memory/nexus/vault"
)

// ReviewLock is the vault lock ([vault.Vault.Lock]) that serialises
// decisions, staging and rollbacks across processes; a package that writes
// review items itself (conflicts) takes it too.
const ReviewLock = "review"

// PendingPath returns the vault-relative path of a pending item.
func PendingPath(id string) string { return vault.PendingDir + "/" + id + ".md" }

// ArchivePath returns the vault-relative path of a decided item.
func ArchivePath(id string) string { return vault.ArchiveDir + "/" + id + ".md" }

// CheckID accepts the ids Nexus makes and file stems a person may use.
func CheckID(id string) error {
	if id == "" || strings.ContainsAny(id, `/\:`) || strings.HasPrefix(id, ".") || len(id) > 100 {
		return fmt.Errorf("%q is not a review item id: %w", id, vault.ErrInvalid)
	}
	if _, err := vault.CleanRel(id); err != nil {
		return fmt.Errorf("%q is not a review item id: %w", id, vault.ErrInvalid)
	}
	return nil
}

// newID returns "r-" and 6 random hex digits.
func newID() string {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return "r-" + hex.EncodeToString(b[:])
}

// Retain files a fact proposal by agent as review/pending/ID.md. The fact is
// validated and scanned exactly as a direct write would be
// ([agents.FactInput.Check]); a refused fact writes nothing. prov.Agent is
// set to agent and prov.Time to now when empty.
func Retain(v *vault.Vault, agent string, in agents.FactInput, prov Provenance, now time.Time) (Item, error) {
	if err := identity.Check(v, agent); err != nil {
		return Item{}, err
	}
	in, err := in.Check()
	if err != nil {
		return Item{}, asReview(err)
	}
	slug, err := agents.Slugify(in.Name)
	if err != nil {
		return Item{}, err
	}
	if err := checkProvenance(&prov, agent, now); err != nil {
		return Item{}, err
	}
	it := Item{Agent: agent, Kind: KindFact, Status: StatusPending, Target: agents.FactPath(agent, slug),
		Provenance: prov, Name: in.Name, Description: in.Description, FactType: in.Type, Update: in.Update, Body: in.Body}
	return stage(v, it)
}

// CheckFact validates and scans in as [Retain] would, without filing it:
// a batch checks every fact first so that one refused files none.
func CheckFact(in agents.FactInput) error {
	if _, err := in.Check(); err != nil {
		return asReview(err)
	}
	return nil
}

// asReview makes a scan refusal say it was a review item that was
// refused.
func asReview(err error) error {
	var se *scan.Error
	if errors.As(err, &se) {
		se.Place = scan.PlaceReview
	}
	return err
}

func checkProvenance(prov *Provenance, agent string, now time.Time) error {
	prov.Agent = agent
	if prov.Time.IsZero() {
		prov.Time = now
	}
	// Milliseconds keep proposals made within one second in order.
	prov.Time = prov.Time.UTC().Truncate(time.Millisecond)
	for _, f := range []struct{ field, s string }{{"session", prov.Session}, {"source", prov.Source}} {
		if f.s == "" {
			continue
		}
		if err := vault.CheckText(f.field, f.s, 300); err != nil {
			return err
		}
		if strings.ContainsAny(f.s, "\r\n") {
			return fmt.Errorf("%s must be one line: %w", f.field, vault.ErrInvalid)
		}
		if err := scan.In(scan.PlaceReview, f.s); err != nil {
			return fmt.Errorf("%s: %w", f.field, err)
		}
	}
	return nil
}

// Stage files it as a new pending item under a fresh id, for a package
// that files items of its own kind ([RegisterKind]): its provenance is
// completed and checked as [Retain] does (the agent is it.Agent, the time
// now unless set).
func Stage(v *vault.Vault, it Item, now time.Time) (Item, error) {
	if err := checkProvenance(&it.Provenance, it.Agent, now); err != nil {
		return Item{}, err
	}
	return stage(v, it)
}

// stage writes a new pending item under a fresh id.
func stage(v *vault.Vault, it Item) (Item, error) {
	dir := v.MustPath(vault.PendingDir)
	if err := vault.MkdirAll(dir, 0o755); err != nil {
		return Item{}, fmt.Errorf("create %s: %w", vault.PendingDir, err)
	}
	for attempt := 0; ; attempt++ {
		it.ID = newID()
		it.Path = PendingPath(it.ID)
		if _, err := vault.Lstat(v.MustPath(ArchivePath(it.ID))); err == nil {
			continue // an id is never reused
		}
		data, err := it.Render()
		if err != nil {
			return Item{}, err
		}
		err = vault.ReplaceIf(v.MustPath(it.Path), nil, data, 0o644)
		if errors.Is(err, vault.ErrConflict) && attempt < 10 {
			continue
		}
		if err != nil {
			return Item{}, fmt.Errorf("stage %s: %w", it.ID, err)
		}
		return it, nil
	}
}

// WriteMemory is the memory tool's write (SPEC §2) with the review gate of
// SPEC §7: when the config has review.write_approval false it applies ops
// to agent's target file ([agents.Memory.Apply]); when true it validates
// them against the file as it is ([agents.Memory.Check]: input, scan,
// matches, limit) and, if they pass, stages them as one pending item. The
// staged result has Success and Staged true and PendingID set; nothing
// lands in memory until a person approves.
func WriteMemory(v *vault.Vault, agent string, target agents.Target, ops []agents.Op, prov Provenance, now time.Time) (agents.Result, error) {
	res, err := writeMemory(v, agent, target, ops, prov, now)
	if res.Limit > 0 {
		res.CuratorNotice = agents.CuratorNotice(v, agent, target, res.Chars, res.Limit) // curator.go
	}
	return res, err
}

func writeMemory(v *vault.Vault, agent string, target agents.Target, ops []agents.Op, prov Provenance, now time.Time) (agents.Result, error) {
	m, err := agents.OpenMemory(v, agent, target)
	if err != nil {
		return agents.Result{Target: string(target), Error: err.Error()}, err
	}
	if !v.Config().Review.WriteApproval {
		return m.Apply(ops...)
	}
	res, err := m.Check(ops...)
	if err != nil {
		return res, err
	}
	if err := checkProvenance(&prov, agent, now); err != nil {
		res.Success, res.Error = false, err.Error()
		return res, err
	}
	clean := make([]agents.Op, len(ops))
	for i, op := range ops {
		clean[i] = agents.Op{Action: strings.ToLower(strings.TrimSpace(op.Action)), Content: strings.TrimSpace(op.Content), OldText: op.OldText}
	}
	it, err := stage(v, Item{Agent: agent, Kind: KindMemory, Status: StatusPending, Target: string(target), Provenance: prov, Ops: clean})
	if err != nil {
		res.Success, res.Error = false, err.Error()
		return res, err
	}
	cur, _ := m.Show()
	cur.Success, cur.Staged, cur.PendingID = true, true, it.ID
	cur.Entries = nil
	cur.Message = fmt.Sprintf("Staged for review as %s: a person must approve it before it lands in %s (the file is unchanged). Do not retry.", it.ID, m.Path())
	return cur, nil
}
