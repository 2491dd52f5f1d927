package vault

import (
	"io/fs"

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
