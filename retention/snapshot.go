package retention

import (
	"crypto/sha256"
	"encoding/hex"
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
	"github.com/nexus-memory/nexus/vault"
)

// SnapshotsDir holds one folder per snapshot: manifest.json and files/
// with a copy of every file that existed, at its vault-relative path.
const SnapshotsDir = vault.StateDir + "/snapshots"

const manifestName = "manifest.json"

// SnapshotFile is one file in a snapshot.
type SnapshotFile struct {
	// Path is vault-relative.
	Path string `json:"path"`
	// Existed is false for a file that did not exist: restoring the
	// snapshot removes it.
	Existed bool      `json:"existed"`
	SHA256  string    `json:"sha256,omitempty"`
	Size    int64     `json:"size,omitempty"`
	Mode    uint32    `json:"mode,omitempty"`
	ModTime time.Time `json:"mod_time,omitzero"`
}

// Snapshot is the state of a set of files before a bulk change.
type Snapshot struct {
	ID      string         `json:"id"`
	Created time.Time      `json:"created"`
	Reason  string         `json:"reason"`
	Files   []SnapshotFile `json:"files"`
}

func snapshotDir(v *vault.Vault, id string) string {
	return v.MustPath(SnapshotsDir + "/" + id)
}

// TakeSnapshot copies the files at paths (vault-relative; missing files are
// recorded as not existing) into a new snapshot, then prunes all but the
// newest config snapshots_keep snapshots.
func TakeSnapshot(v *vault.Vault, reason string, paths []string, now time.Time) (*Snapshot, error) {
	now = now.UTC()
	s := &Snapshot{ID: "s-" + now.Format("20060102T150405.000Z") + "-" + newID()[2:], Created: now.Truncate(time.Second), Reason: reason}
	s.ID = strings.Replace(s.ID, ".", "", 1)
	dir := snapshotDir(v, s.ID)
	if err := vault.MkdirAll(filepath.Join(dir, "files"), 0o755); err != nil {
		return nil, fmt.Errorf("create snapshot: %w", err)
	}
	if err := s.add(v, paths, true); err != nil {
		vault.RemoveAll(dir)
		return nil, err
	}
	if err := prune(v, v.Config().SnapshotsKeep, s.ID); err != nil {
		return s, err
	}
	return s, nil
}

// add records paths not yet in the snapshot; copy: whether to copy files
// that exist (false records them as created after the snapshot).
func (s *Snapshot) add(v *vault.Vault, paths []string, copyExisting bool) error {
	dir := snapshotDir(v, s.ID)
	have := map[string]bool{}
	for _, f := range s.Files {
		have[f.Path] = true
	}
	for _, rel := range paths {
		clean, err := vault.CleanRel(rel)
		if err != nil || have[clean] || vault.Hidden(clean) {
			continue
		}
		have[clean] = true
		abs, err := v.Path(clean)
		if err != nil {
			continue
		}
		sf := SnapshotFile{Path: clean}
		data, err := vault.ReadStable(abs) // not a save caught half way: rollback would restore it

		switch {
		case errors.Is(err, fs.ErrNotExist) || !copyExisting:
		case err != nil:
			return fmt.Errorf("snapshot %s: %w", clean, err)
		default:
			info, err := vault.Stat(abs)
			if err != nil {
				return fmt.Errorf("snapshot %s: %w", clean, err)
			}
			sum := sha256.Sum256(data)
			sf.Existed, sf.SHA256, sf.Size, sf.Mode, sf.ModTime = true, hex.EncodeToString(sum[:]), int64(len(data)), uint32(info.Mode().Perm()), info.ModTime().UTC()
			dst := filepath.Join(dir, "files", filepath.FromSlash(clean))
			if err := vault.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return fmt.Errorf("snapshot %s: %w", clean, err)
			}
			if err := vault.WriteFile(dst, data, 0o644); err != nil {
				return fmt.Errorf("snapshot %s: %w", clean, err)
			}
		}
		s.Files = append(s.Files, sf)
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode snapshot manifest: %w", err)
	}
	return vault.WriteFile(filepath.Join(dir, manifestName), append(data, '\n'), 0o644)
}

// AddCreated records files a bulk change created that the snapshot did not
// name beforehand, so that a rollback removes them.
func (s *Snapshot) AddCreated(v *vault.Vault, paths []string) error {
	return s.add(v, paths, false)
}

// ListSnapshots returns the snapshots, newest first.
func ListSnapshots(v *vault.Vault) ([]Snapshot, error) {
	des, err := vault.ReadDir(v.MustPath(SnapshotsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	var out []Snapshot
	for _, de := range des {
		if !de.IsDir() || !strings.HasPrefix(de.Name(), "s-") {
			continue
		}
		s, err := LoadSnapshot(v, de.Name())
		if err != nil {
			continue // a snapshot being written, or damaged: not listed
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out, nil
}

// LoadSnapshot reads snapshot id's manifest.
func LoadSnapshot(v *vault.Vault, id string) (Snapshot, error) {
	var s Snapshot
	if err := CheckID(id); err != nil || !strings.HasPrefix(id, "s-") {
		return s, fmt.Errorf("%q is not a snapshot id: %w", id, vault.ErrInvalid)
	}
	data, err := vault.ReadFile(filepath.Join(snapshotDir(v, id), manifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return s, fmt.Errorf("%s: %w", id, ErrNoSnapshot)
	}
	if err != nil {
		return s, fmt.Errorf("read snapshot %s: %w", id, err)
	}
	if err := json.Unmarshal(data, &s); err != nil || s.ID != id {
		return s, fmt.Errorf("snapshot %s manifest unreadable: %w", id, ErrSnapshotCorrupt)
	}
	return s, nil
}

// prune removes all but the newest keep snapshots, never keepID.
func prune(v *vault.Vault, keep int, keepID string) error {
	des, err := vault.ReadDir(v.MustPath(SnapshotsDir))
	if err != nil {
		return fmt.Errorf("prune snapshots: %w", err)
	}
	var ids []string
	for _, de := range des {
		if de.IsDir() && strings.HasPrefix(de.Name(), "s-") {
			ids = append(ids, de.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	for i, id := range ids {
		if i < keep || id == keepID {
			continue
		}
		if err := vault.RemoveAll(snapshotDir(v, id)); err != nil {
			return fmt.Errorf("prune snapshot %s: %w", id, err)
		}
	}
	return nil
}

// RollbackResult reports a rollback.
type RollbackResult struct {
	// Restored is the snapshot put back.
	Restored Snapshot `json:"restored"`
	// Taken is the snapshot of the state the rollback replaced; rolling
	// it back undoes the rollback.
	Taken Snapshot `json:"taken"`
}

// Rollback restores the files of snapshot id (the newest if id is ""):
// every file that existed gets back its exact bytes, mode and modification
// time, every file that did not exist is removed. It first checks every
// stored copy against the manifest (nothing is restored from a damaged
// snapshot) and takes a snapshot of the state it replaces.
//
// With review.require_person_key on it is refused; use [RollbackSigned].
func Rollback(v *vault.Vault, id string, now time.Time) (RollbackResult, error) {
	return RollbackSigned(v, id, Decision{Now: now})
}

// RollbackSigned is [Rollback] as a person's decision: d.Signer (or
// d.Signature) signs the rollback to snapshot id, the hash of its manifest
// and d.Now. With review.require_person_key on, a rollback without a
// valid signature is refused, wrapping [ErrUnsigned].
func RollbackSigned(v *vault.Vault, id string, d Decision) (RollbackResult, error) {
	unlock, err := v.Lock(ReviewLock)
	if err != nil {
		return RollbackResult{}, err
	}
	defer unlock()
	if _, err := recoverLocked(v); err != nil {
		return RollbackResult{}, err
	}
	if d.Now.IsZero() {
		d.Now = time.Now()
	}
	if id == "" {
		all, err := ListSnapshots(v)
		if err != nil {
			return RollbackResult{}, err
		}
		if len(all) == 0 {
			return RollbackResult{}, fmt.Errorf("nothing to roll back: %w", ErrNoSnapshot)
		}
		id = all[0].ID
	}
	if RequirePersonKey(v) || d.Signer != nil || d.Signature != nil {
		st, err := snapshotStatement(v, id, d.Now)
		if err != nil {
			return RollbackResult{}, err
		}
		if _, err := signDecision(v, st, d); err != nil {
			return RollbackResult{}, err
		}
	}
	return RollbackLocked(v, id, d.Now)
}

// RollbackLocked is [Rollback] for a caller that holds the review lock: a
// [KindHandler] undoing its own approval.
func RollbackLocked(v *vault.Vault, id string, now time.Time) (RollbackResult, error) {
	var res RollbackResult
	if id == "" {
		all, err := ListSnapshots(v)
		if err != nil {
			return res, err
		}
		if len(all) == 0 {
			return res, fmt.Errorf("nothing to roll back: %w", ErrNoSnapshot)
		}
		id = all[0].ID
	}
	s, err := LoadSnapshot(v, id)
	if err != nil {
		return res, err
	}
	res.Restored = s
	stored, err := s.contents(v)
	if err != nil {
		return res, err
	}
	var paths []string
	for _, f := range s.Files {
		paths = append(paths, f.Path)
	}
	taken, err := TakeSnapshot(v, "before rollback to "+id, paths, now)
	if err != nil {
		return res, err
	}
	res.Taken = *taken
	// From here files change: record the rollback first, so a process
	// killed half way through the restore is finished by the next run.
	in, err := beginIntent(v, Intent{Op: IntentRollback, ID: id, Taken: taken.ID, Now: now})
	if err != nil {
		return res, err
	}
	if err := s.restore(v, stored); err != nil {
		return res, err
	}
	if err := in.done(v); err != nil {
		return res, err
	}
	return res, nil
}

// contents reads and checks the snapshot's copies of the files that
// existed when it was taken.
func (s *Snapshot) contents(v *vault.Vault) (map[string][]byte, error) {
	stored := map[string][]byte{}
	for _, f := range s.Files {
		if _, err := vault.CleanRel(f.Path); err != nil || vault.Hidden(f.Path) {
			return nil, fmt.Errorf("snapshot %s names %q: %w", s.ID, f.Path, ErrSnapshotCorrupt)
		}
		if !f.Existed {
			continue
		}
		data, err := vault.ReadFile(filepath.Join(snapshotDir(v, s.ID), "files", filepath.FromSlash(f.Path)))
		sum := sha256.Sum256(data)
		if err != nil || hex.EncodeToString(sum[:]) != f.SHA256 {
			return nil, fmt.Errorf("snapshot %s: copy of %s: %w", s.ID, f.Path, ErrSnapshotCorrupt)
		}
		stored[f.Path] = data
	}
	return stored, nil
}

// restore puts every file of the snapshot back as it was (removing those
// made after it) and brings the memory indexes in step. Every step is
// safe to repeat.
func (s *Snapshot) restore(v *vault.Vault, stored map[string][]byte) error {
	for _, f := range s.Files {
		abs, err := v.Path(f.Path)
		if err != nil {
			return err
		}
		if !f.Existed {
			if err := vault.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("rollback: remove %s: %w", f.Path, err)
			}
			continue
		}
		if err := vault.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return fmt.Errorf("rollback %s: %w", f.Path, err)
		}
		mode := fs.FileMode(f.Mode)
		if mode == 0 {
			mode = 0o644
		}
		if err := vault.WriteFile(abs, stored[f.Path], mode); err != nil {
			return fmt.Errorf("rollback %s: %w", f.Path, err)
		}
		if !f.ModTime.IsZero() {
			os.Chtimes(abs, f.ModTime, f.ModTime)
		}
		if testHookRestored != nil {
			testHookRestored()
		}
	}
	// Fact files came back or went: bring the fact caches in step now, so
	// that the next write does not work from what the rollback undid.
	if err := agents.SyncAllIndexes(v); err != nil && !errors.Is(err, agents.ErrIndexFull) {
		return err
	}
	return nil
}

// testHookRestored runs after each file a rollback restores.
var testHookRestored func()
