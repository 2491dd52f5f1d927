//go:build !windows

package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// fsyncDir is the fsync of an open folder; tests override it to inject
// the answers of file systems that cannot fsync a folder.
var fsyncDir = (*os.File).Sync

// SyncDir fsyncs a folder so that a rename or create inside it survives a
// power loss. A file system that cannot fsync a folder (exFAT, SMB and
// some FUSE mounts answer ENOTSUP, ENOSYS or EINVAL) gives no more
// durability than its own: that is not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open folder for sync: %w", err)
	}
	defer d.Close()
	return syncOpenDir(d, dir)
}

// syncOpenDir is [SyncDir] of a folder already open as d.
func syncOpenDir(d *os.File, dir string) error {
	if err := fsyncDir(d); err != nil && !syncUnsupported(err) {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}

// syncUnsupported reports whether err is a file system's way of saying it
// cannot fsync a folder: ENOTSUP/EOPNOTSUPP/ENOSYS (errors.ErrUnsupported)
// or EINVAL, which fsync(2) returns for a file that "does not support
// synchronization".
func syncUnsupported(err error) bool {
	return errors.Is(err, errors.ErrUnsupported) || errors.Is(err, syscall.EINVAL)
}
