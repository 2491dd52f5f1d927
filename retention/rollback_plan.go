package retention

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// What a rollback does to one file of its snapshot ([RollbackFile].Change).
const (
	ChangeRestore   = "restore"   // the file holds other bytes now: it gets the snapshot's back
	ChangeRecreate  = "recreate"  // the file is gone now: it is written back
	ChangeRemove    = "remove"    // the file did not exist in the snapshot (the bulk change made it): it is removed
	ChangeUnchanged = "unchanged" // the file is already as in the snapshot
)

// RollbackFile is one file of a [RollbackPlan].
type RollbackFile struct {
	Path   string `json:"path"`
	Change string `json:"change"`
	// Size is the size the file gets back (0 for one that is removed).
	Size int64 `json:"size"`
}

// RollbackPlan is what [Rollback] of a snapshot would do, file by file,
// compared with the vault as it is now.
type RollbackPlan struct {
	// ID, Created and Reason name the snapshot the files come from.
	ID      string         `json:"snapshot"`
	Created time.Time      `json:"created"`
	Reason  string         `json:"reason"`
	Files   []RollbackFile `json:"files"`
	// Changes counts the files that are not already as in the snapshot.
	Changes int `json:"changes"`
}

// PlanRollback reports what [Rollback] of snapshot id (the newest if id is
// "") would do, and changes nothing. It checks the stored copies as
// Rollback does, so a damaged snapshot fails here too ([ErrSnapshotCorrupt]).
// Roll back by the plan's ID to restore exactly the snapshot shown.
func PlanRollback(v *vault.Vault, id string) (RollbackPlan, error) {
	var plan RollbackPlan
	if id == "" {
		all, err := ListSnapshots(v)
		if err != nil {
			return plan, err
		}
		if len(all) == 0 {
			return plan, fmt.Errorf("nothing to roll back: %w", ErrNoSnapshot)
		}
		id = all[0].ID
	}
	s, err := LoadSnapshot(v, id)
	if err != nil {
		return plan, err
	}
	if _, err := s.contents(v); err != nil {
		return plan, err
	}
	plan = RollbackPlan{ID: s.ID, Created: s.Created, Reason: s.Reason, Files: make([]RollbackFile, 0, len(s.Files))}
	for _, f := range s.Files {
		abs, err := v.Path(f.Path)
		if err != nil {
			return plan, fmt.Errorf("snapshot %s names %q: %w", s.ID, f.Path, ErrSnapshotCorrupt)
		}
		cur, err := vault.ReadFile(abs)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return plan, fmt.Errorf("compare %s: %w", f.Path, err)
		}
		rf := RollbackFile{Path: f.Path}
		switch {
		case !f.Existed && exists:
			rf.Change = ChangeRemove
		case !f.Existed:
			rf.Change = ChangeUnchanged
		case !exists:
			rf.Change, rf.Size = ChangeRecreate, f.Size
		default:
			sum := sha256.Sum256(cur)
			rf.Change, rf.Size = ChangeRestore, f.Size
			if hex.EncodeToString(sum[:]) == f.SHA256 {
				rf.Change = ChangeUnchanged
			}
		}
		if rf.Change != ChangeUnchanged {
			plan.Changes++
		}
		plan.Files = append(plan.Files, rf)
	}
	return plan, nil
}
