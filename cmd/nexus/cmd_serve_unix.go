//go:build unix && !lite

package main

import (
	"os/signal"
	"syscall"
)

// ignoreSIGPIPE keeps a stdio server alive when its client goes away:
// otherwise the first answer written to the closed pipe kills the process
// with SIGPIPE, possibly in the middle of another call's write. With the
// signal ignored the write fails with EPIPE, calls in flight finish, and
// the server exits cleanly at the end of its input.
func ignoreSIGPIPE() { signal.Ignore(syscall.SIGPIPE) }
