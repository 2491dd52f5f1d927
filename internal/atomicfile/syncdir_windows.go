//go:build windows

package atomicfile

// SyncDir is a no-op on Windows: folders cannot be opened for fsync there,
// and NTFS journals the rename's metadata itself.
func SyncDir(dir string) error { return nil }
