package index

import (
	"os"
	"syscall"
)

// ctimeOf is fi's inode change time in unix nanoseconds (see
// [fileState.Ctime]).
func ctimeOf(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
