//go:build !windows

package livelog

import (
	"io/fs"
	"syscall"
)

// fileID returns the inode number of a file (0 if unknown).
func fileID(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Ino)
	}
	return 0
}
