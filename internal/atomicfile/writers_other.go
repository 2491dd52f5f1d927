//go:build !linux

package atomicfile

import "os"

// openForWriting cannot tell on this system (see writers_linux.go).
func openForWriting(h *os.File) bool { return false }
