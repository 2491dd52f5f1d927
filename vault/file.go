package vault

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/nexus-memory/nexus/internal/atomicfile"
)

// WriteFile atomically replaces the file at the absolute path with data:
// temp file in the same folder, fsync, rename, fsync the folder. A reader or
// a crash sees the old bytes or the new, never a torn file. A missing parent
// folder is created (init makes only .nexus/; the rest of the layout is made
// by the first write into it). An error once the new bytes are in place is
// a [*DurabilityError]: check [Written] before reporting a failed write.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	if r, rel, ok := vaultOf(path); ok {
		return writeIn(r, rel, path, data, perm, nil)
	}
	if err := mkParent(path); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data, perm)
}

// CASAttempts is how often a writer of a file a person may edit starts
// over when [ReplaceIf] reports [ErrConflict] before it gives up: every
// such writer (memory, facts, pins, INDEX.md, checkpoints, IDENTITY.md,
// config.yaml, ignore files) retries the same number of times. Each
// conflict is a save the writer did not overwrite; fifty in a row would
// take a person saving continuously for seconds.
const CASAttempts = 50

// ReplaceIf is a compare-and-swap [WriteFile]: it writes only if the file
// still holds old (old == nil: the file must not exist), and otherwise
// returns [ErrConflict] having written nothing. Use it for every file a
// person may edit in Obsidian, re-reading and recomputing on conflict.
// A missing parent folder is created, as by [WriteFile]. Writers retry up
// to [CASAttempts] times. A [*DurabilityError] means the swap is done: do
// not start over (see [Written]).
func ReplaceIf(path string, old, data []byte, perm fs.FileMode) error {
	if r, rel, ok := vaultOf(path); ok {
		return writeIn(r, rel, path, data, perm, &old)
	}
	if err := mkParent(path); err != nil {
		return err
	}
	return atomicfile.ReplaceIf(path, old, data, perm)
}

// mkParent creates path's folder if it is missing. The common case, a
// folder that exists, costs one stat.
func mkParent(path string) error {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create folder for %s: %w", filepath.Base(path), err)
	}
	return nil
}

// DurabilityError is returned by [WriteFile] and [ReplaceIf] when the new
// bytes are in place — every reader sees them — but the folder's fsync
// that makes the rename survive a power loss failed. The write happened;
// reporting it as failed would make a caller retry it and, for an append
// (a memory entry, a new fact), write it twice.
type DurabilityError = atomicfile.DurabilityError

// Written reports whether a write that returned err left the new bytes in
// place: err is nil or a [*DurabilityError]. Writers whose retry is not
// idempotent treat such an error as success (and may log it).
func Written(err error) bool { return atomicfile.Written(err) }

// SyncDir fsyncs a folder (a no-op on Windows, and where the file system
// cannot fsync folders).
func SyncDir(dir string) error { return atomicfile.SyncDir(dir) }

// settleWindow is how recently a file must have changed for an empty read
// to be suspected of catching a save half way.
const settleWindow = time.Second

// ReadStable reads a file a person may be saving right now. Obsidian and
// many editors save in place: truncate, then write. A read between the two
// sees an empty file, and a write computed from it would drop the person's
// text (the save then lands on the file Nexus replaced). So an empty file
// that changed within the last second is re-read until it has content or
// has stayed empty for a second. Non-empty reads return at once; the
// compare-and-swap of [ReplaceIf] catches later changes.
func ReadStable(path string) ([]byte, error) {
	for {
		data, err := ReadFile(path)
		if err != nil || len(data) > 0 {
			return data, err
		}
		st, err := Stat(path)
		if err != nil {
			return nil, err
		}
		age := time.Since(st.ModTime())
		if age >= settleWindow || age < -settleWindow {
			return data, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}
