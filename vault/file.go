package vault

import (
	"io/fs"
	"os"
	"time"

	"github.com/nexus-memory/nexus/internal/atomicfile"
)

// WriteFile atomically replaces the file at the absolute path with data:
// temp file in the same folder, fsync, rename, fsync the folder. A reader or
// a crash sees the old bytes or the new, never a torn file.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return atomicfile.WriteFile(path, data, perm)
}

// ReplaceIf is a compare-and-swap [WriteFile]: it writes only if the file
// still holds old (old == nil: the file must not exist), and otherwise
// returns [ErrConflict] having written nothing. Use it for every file a
// person may edit in Obsidian, re-reading and recomputing on conflict.
func ReplaceIf(path string, old, data []byte, perm fs.FileMode) error {
	return atomicfile.ReplaceIf(path, old, data, perm)
}

// SyncDir fsyncs a folder (a no-op on Windows).
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
		data, err := os.ReadFile(path)
		if err != nil || len(data) > 0 {
			return data, err
		}
		st, err := os.Stat(path)
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
