//go:build !linux && !darwin

package links

import "io/fs"

// ctimeOf: no inode change time through fs.FileInfo here; size and mtime
// alone tell a change.
func ctimeOf(fs.FileInfo) int64 { return 0 }
