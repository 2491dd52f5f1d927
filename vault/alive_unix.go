//go:build !windows

package vault

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this PID exists (one of
// another user's counts: EPERM).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
