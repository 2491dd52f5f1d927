//go:build unix

package vault

import (
	"io/fs"
	"strconv"
	"syscall"
)

// folderID is the inode number of a folder: a copy of it has another.
// The device number is left out: network and FUSE mounts get a new one
// on every mount.
func folderID(st fs.FileInfo) string {
	if s, ok := st.Sys().(*syscall.Stat_t); ok && s.Ino != 0 {
		return strconv.FormatUint(uint64(s.Ino), 10)
	}
	return ""
}
