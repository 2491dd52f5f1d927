//go:build !windows

package atomicfile

import "os"

func rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
