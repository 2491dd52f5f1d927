package links

import (
	"io/fs"
	"syscall"
)

// ctimeOf is info's inode change time in unix nanoseconds: a save that
// keeps a file's size and sets its mtime back (rsync -t, a restore)
// still changes it.
func ctimeOf(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ctimespec.Nano()
	}
	return 0
}
