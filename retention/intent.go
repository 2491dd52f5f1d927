package retention

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/person"
	"github.com/nexus-memory/nexus/vault"
)

// A review decision touches several files: the fact file (or MEMORY.md),
// the memory index, the archive copy and the pending file. A process
// killed between them left a fact written while its item stayed pending.
// So every decision first writes an intent — what is about to be done —
// to .nexus/state/review-intents/, and removes it only once every step is
// done. The next run of any command that opens the review (and the serve
// and watch loops) finds a leftover intent and finishes the decision
// ([Recover]); every step is safe to repeat. Intents are machine-local
// state: the half-done steps are this machine's own.

// IntentsDir holds unfinished decisions.
const IntentsDir = vault.StateDir + "/review-intents"

// Intent kinds.
const (
	IntentApprove  = "approve"
	IntentReject   = "reject"
	IntentRollback = "rollback"
)

// Intent is one decision under way.
type Intent struct {
	// Op is approve, reject or rollback.
	Op string `json:"op"`
	// ID is the review item (approve, reject) or the snapshot (rollback).
	ID string `json:"id"`
	// Decision is the person's decision (approve, reject).
	By   string    `json:"by,omitempty"`
	Why  string    `json:"why,omitempty"`
	Text *string   `json:"text,omitempty"`
	Now  time.Time `json:"now"`
	// Signature is the person's signature of the decision, when it has
	// one: checked again when a killed decision is finished.
	Signature *person.Signature `json:"signature,omitempty"`
	// Taken is the snapshot a rollback took before restoring.
	Taken string `json:"taken,omitempty"`
	// Started is when the decision began.
	Started time.Time `json:"started"`
	// PID is the process that began it.
	PID int `json:"pid"`

	file string // the intent's file name
}

// Path is the intent's vault-relative path.
func (in Intent) Path() string { return IntentsDir + "/" + in.file }

func intentFile(op, id string) string { return op + "-" + id + ".json" }

// beginIntent records in before its first step.
func beginIntent(v *vault.Vault, in Intent) (*Intent, error) {
	dir := v.MustPath(IntentsDir)
	if err := vault.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", IntentsDir, err)
	}
	in.Started = time.Now().UTC()
	in.PID = os.Getpid()
	in.file = intentFile(in.Op, in.ID)
	data, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := vault.WriteFile(filepath.Join(dir, in.file), append(data, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("record the %s of %s before doing it: %w", in.Op, in.ID, err)
	}
	return &in, nil
}

// done removes a finished intent.
func (in *Intent) done(v *vault.Vault) error {
	if in == nil {
		return nil
	}
	err := vault.Remove(filepath.Join(v.MustPath(IntentsDir), in.file))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("finish the %s of %s: %w", in.Op, in.ID, err)
	}
	return nil
}

// Unfinished lists the decisions a killed process left half done, oldest
// first, without finishing them (for doctor).
func Unfinished(v *vault.Vault) ([]Intent, error) {
	dir := v.MustPath(IntentsDir)
	des, err := vault.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", IntentsDir, err)
	}
	var out []Intent
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() || !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		data, err := vault.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue // finished meanwhile
		}
		var in Intent
		if err := json.Unmarshal(data, &in); err != nil || in.ID == "" || CheckID(in.ID) != nil {
			in = Intent{Op: "invalid", ID: strings.TrimSuffix(name, ".json")}
		}
		in.file = name
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out, nil
}

// RecoverResult reports what [Recover] finished.
type RecoverResult struct {
	// Finished are the decisions completed, as "approve r-1a2b3c".
	Finished []string `json:"finished,omitempty"`
	// Failed are decisions that could not be finished, with the reason;
	// their intents stay for the next run.
	Failed []string `json:"failed,omitempty"`
}

// Recover finishes every decision a killed process left half done. It is
// cheap when there is none (one directory read) and safe to run from
// several processes at once (it takes the review lock). Commands call it
// before they run; serve and watch call it on start.
func Recover(v *vault.Vault) (RecoverResult, error) {
	var res RecoverResult
	if ins, err := Unfinished(v); err != nil || len(ins) == 0 {
		return res, err
	}
	unlock, err := v.Lock(ReviewLock)
	if err != nil {
		return res, err
	}
	defer unlock()
	return recoverLocked(v)
}

// recoverLocked is [Recover] with the review lock held.
func recoverLocked(v *vault.Vault) (RecoverResult, error) {
	var res RecoverResult
	ins, err := Unfinished(v) // again, under the lock
	if err != nil {
		return res, err
	}
	touched := map[string]bool{}
	for i := range ins {
		in := &ins[i]
		label := in.Op + " " + in.ID
		var err error
		switch in.Op {
		case IntentApprove, IntentReject:
			var it Item
			it, err = finishDecision(v, in)
			if it.Agent != "" {
				touched[it.Agent] = true
			}
		case IntentRollback:
			err = finishRollback(v, in)
			touched[""] = true
		default:
			err = fmt.Errorf("unreadable intent %s", in.file)
		}
		if err != nil {
			res.Failed = append(res.Failed, label+": "+err.Error())
			continue
		}
		if err := in.done(v); err != nil {
			res.Failed = append(res.Failed, label+": "+err.Error())
			continue
		}
		res.Finished = append(res.Finished, label)
	}
	// A kill between a fact file and INDEX.md left them apart.
	if touched[""] {
		if err := agents.SyncAllIndexes(v); err != nil && !errors.Is(err, agents.ErrIndexFull) {
			return res, err
		}
	} else {
		for agent := range touched {
			if err := agents.SyncIndex(v, agent); err != nil && !errors.Is(err, agents.ErrIndexFull) {
				return res, err
			}
		}
	}
	if len(res.Failed) > 0 {
		return res, fmt.Errorf("could not finish %d review decision(s) left half done: %s", len(res.Failed), strings.Join(res.Failed, "; "))
	}
	return res, nil
}

// finishDecision completes an approve or reject: when the archive copy is
// written only the pending file is left to remove; otherwise the decision
// runs again, and an approval whose fact or memory change already landed
// is completed without applying it twice (see [landed]).
func finishDecision(v *vault.Vault, in *Intent) (Item, error) {
	archived, aerr := readItem(v, ArchivePath(in.ID))
	_, perr := vault.Lstat(v.MustPath(PendingPath(in.ID)))
	pending := perr == nil
	switch {
	case aerr == nil && !pending:
		return archived, nil // done; only the intent was left
	case aerr == nil && pending:
		// Killed between writing the archive and removing the pending file.
		if err := vault.Remove(v.MustPath(PendingPath(in.ID))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return archived, err
		}
		return archived, vault.SyncDir(v.MustPath(vault.PendingDir))
	case !pending:
		return Item{}, nil // neither: someone moved it away; nothing to finish
	}
	it, err := decide(v, in.ID, Decision{By: in.By, Why: in.Why, Text: in.Text, Now: in.Now, Signature: in.Signature}, in.Op == IntentApprove, false)
	if errors.Is(err, ErrApply) {
		// The approval cannot be applied (the fact or memory changed since):
		// the item is pending again with the reason, as a failed approval
		// always is. The decision is finished.
		return it, nil
	}
	return it, err
}

// finishRollback restores the snapshot again: every step of a restore is
// safe to repeat, and the snapshot taken before it is already recorded.
func finishRollback(v *vault.Vault, in *Intent) error {
	s, err := LoadSnapshot(v, in.ID)
	if err != nil {
		return err
	}
	stored, err := s.contents(v)
	if err != nil {
		return err
	}
	return s.restore(v, stored)
}

// landed reports whether an approved item's change is already in place,
// from this very item: a fact file whose source names the item and whose
// text is the item's, or memory that already holds what the operations
// would make of it. A process killed after applying but before archiving
// left it so; applying again would fail ("already exists", "no entry
// matches") or change it twice.
func landed(v *vault.Vault, it Item) bool {
	if h, ok := handlerFor(it.Kind); ok {
		_, ok := h.Landed(v, it) // a curator proposal, a sync conflict (kinds.go)
		return ok
	}
	switch it.Kind {
	case KindFact:
		f, err := agents.ReadFact(v, it.Agent, it.Name)
		if err != nil {
			return false
		}
		want := it.FactInput()
		return strings.Contains(f.Source, "review:"+it.ID) && f.Name == strings.TrimSpace(want.Name) &&
			f.Body == strings.TrimSpace(strings.ReplaceAll(want.Body, "\r\n", "\n")) && f.Description == strings.TrimSpace(want.Description)
	case KindMemory:
		t, err := agents.ParseTarget(it.Target)
		if err != nil {
			return false
		}
		m, err := agents.OpenMemory(v, it.Agent, t)
		if err != nil {
			return false
		}
		cur, err := m.Show()
		if err != nil {
			return false
		}
		has := func(s string) bool {
			for _, e := range cur.Entries {
				if e == s {
					return true
				}
			}
			return false
		}
		contains := func(s string) bool {
			for _, e := range cur.Entries {
				if strings.Contains(e, s) {
					return true
				}
			}
			return false
		}
		for _, op := range it.Ops {
			content := strings.TrimSpace(op.Content)
			switch op.Action {
			case agents.ActionAdd:
				if !has(content) {
					return false
				}
			case agents.ActionReplace:
				if !has(content) || (op.OldText != "" && !strings.Contains(content, op.OldText) && contains(op.OldText)) {
					return false
				}
			case agents.ActionRemove:
				if op.OldText == "" || contains(op.OldText) {
					return false
				}
			default:
				return false
			}
		}
		return len(it.Ops) > 0
	}
	return false
}
