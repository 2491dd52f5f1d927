//go:build unix

package hybrid_test

import (
	"syscall"
	"time"
)

// cpuTime is the process's user and system CPU time so far: the
// benchmark reports it per search, which other processes on a busy
// machine do not inflate the way they inflate wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
