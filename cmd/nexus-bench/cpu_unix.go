//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSSMB is a finished child process's peak resident memory, in MB
// (ru_maxrss: kilobytes on Linux, bytes on macOS). On Linux it can be the
// parent's: a child's ru_maxrss includes the memory of the process it was
// forked from, before the exec (a 33 MB FTS5 build read 90 MB when forked
// from this benchmark after it had built an index). Use [runPeak] there.
func peakRSSMB(ps *os.ProcessState) float64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return float64(ru.Maxrss) / 1e6
	}
	return float64(ru.Maxrss) * 1024 / 1e6
}
