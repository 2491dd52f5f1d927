//go:build !windows

package atomicfile

import (
	"fmt"
	"os"
)

// SyncDir fsyncs a folder so that a rename or create inside it survives a
// power loss.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open folder for sync: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}
