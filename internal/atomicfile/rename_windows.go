//go:build windows

package atomicfile

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// rename retries for a short while when Windows refuses to replace a file
// that another process (Obsidian, an indexer, antivirus) holds open without
// FILE_SHARE_DELETE; such holds are brief. cmd/go's robustio does the same.
func rename(oldpath, newpath string) error {
	const (
		errAccessDenied     = syscall.Errno(5)
		errSharingViolation = syscall.Errno(32)
	)
	deadline := time.Now().Add(500 * time.Millisecond)
	delay := time.Millisecond
	for {
		err := os.Rename(oldpath, newpath)
		if err == nil || !(errors.Is(err, errAccessDenied) || errors.Is(err, errSharingViolation)) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(delay)
		if delay < 64*time.Millisecond {
			delay *= 2
		}
	}
}
