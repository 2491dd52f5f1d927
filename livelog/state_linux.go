package livelog

import (
	"errors"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/nexus-memory/nexus/vault"
)

// noSwap is set once a file system refused to swap two files
// (RENAME_EXCHANGE is not supported everywhere: some network and FUSE
// file systems); state files are then replaced by rename.
var noSwap atomic.Bool

// replaceState replaces the state file at path with data. On Linux it
// rewrites the swap partner (.NAME.next) in place and swaps the two names
// in one step (renameat2 RENAME_EXCHANGE): a reader opening path sees the
// old text or the new, never a mix, and no file is created or deleted.
// Creating a file and renaming it over the old one costs ext4 an inode
// and an early flush of the new data (auto_da_alloc): about 0.7 ms, which
// was most of an append's time. A crash mid-write leaves path whole and
// the partner half written (its sum tells).
func replaceState(path string, data []byte) error {
	if noSwap.Load() {
		return renameState(path, data)
	}
	next := nextStatePath(path)
	f, err := vault.OpenFile(next, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	err = fillState(f, data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	err = unix.Renameat2(unix.AT_FDCWD, next, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENOENT):
		// No state file yet (or it was removed): the partner becomes it.
		return vault.Rename(next, path)
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP):
		noSwap.Store(true)
		vault.Remove(next)
		return renameState(path, data)
	}
	return &os.LinkError{Op: "renameat2", Old: next, New: path, Err: err}
}
