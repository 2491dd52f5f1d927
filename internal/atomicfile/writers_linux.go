package atomicfile

import (
	"os"
	"syscall"
)

// openForWriting reports whether some process holds h's file open for
// writing. The kernel refuses a read lease on a file that is open for
// writing (EAGAIN), so the probe takes one and gives it back at once. It
// reports false when the kernel cannot tell: the file is not ours (leases
// need the owner or CAP_LEASE) or its file system has no leases.
func openForWriting(h *os.File) bool {
	rc, err := h.SyscallConn()
	if err != nil {
		return false
	}
	var errno error
	rc.Control(func(fd uintptr) {
		if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETLEASE, syscall.F_RDLCK); e != 0 {
			errno = e
			return
		}
		syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETLEASE, syscall.F_UNLCK)
	})
	return errno == syscall.EAGAIN
}
