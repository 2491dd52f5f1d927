//go:build windows

package atomicfile

import "os"

// SyncDir is a no-op on Windows: folders cannot be opened for fsync there,
// and NTFS journals the rename's metadata itself.
func SyncDir(dir string) error { return nil }

// syncOpenDir is a no-op on Windows, as [SyncDir] is.
func syncOpenDir(d *os.File, dir string) error { return nil }
