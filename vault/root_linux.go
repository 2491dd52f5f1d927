package vault

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// On Linux 5.6 and later a path inside the vault is opened in one system
// call, openat2 with RESOLVE_BENEATH from the vault folder's descriptor:
// the kernel resolves the whole path and refuses, as os.Root does, any
// symlink that is absolute or leads above the folder (and any /proc
// magic link). os.Root opens each folder of the path in turn instead
// (an open and a close per folder, and more for the file): a state file
// five folders deep cost an append twelve system calls to open, and an
// append opens a dozen files. Whatever openat2 refuses or fails (an
// escape, a missing file, an older kernel, a sandbox that forbids the
// call) is done again by os.Root, so errors and the rules for symlinks
// stay os.Root's: the fast path only ever succeeds where os.Root would.

// noBeneath is set once openat2 proved unavailable (ENOSYS, or EPERM
// from a seccomp filter that does not know it).
var noBeneath atomic.Bool

// rootDir is a root's folder opened for openat2.
type rootDir struct {
	f  *os.File
	fd int
}

var rootDirs sync.Map // *os.Root -> *rootDir (nil if it could not be opened)

// dirOf returns the descriptor of r's folder, opening it on first use
// (through r, so it is the folder r holds).
func dirOf(r *os.Root) (int, bool) {
	if d, ok := rootDirs.Load(r); ok {
		if d := d.(*rootDir); d != nil {
			return d.fd, true
		}
		return 0, false
	}
	f, err := r.Open(".")
	if err != nil {
		rootDirs.Store(r, (*rootDir)(nil))
		return 0, false
	}
	d := &rootDir{f: f, fd: int(f.Fd())}
	if prev, loaded := rootDirs.LoadOrStore(r, d); loaded {
		f.Close()
		if prev := prev.(*rootDir); prev != nil {
			return prev.fd, true
		}
		return 0, false
	}
	return d.fd, true
}

// openBeneath opens rel (relative to r's folder, in the OS's form) with
// flag and perm in one openat2 call; ok is false when it did not, and the
// caller goes through r instead.
func openBeneath(r *os.Root, rel string, flag int, perm fs.FileMode) (*os.File, bool) {
	if noBeneath.Load() || perm&^fs.ModePerm != 0 {
		return nil, false
	}
	dir, ok := dirOf(r)
	if !ok {
		return nil, false
	}
	how := unix.OpenHow{
		Flags:   uint64(flag) | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	if flag&(os.O_CREATE|unix.O_TMPFILE) != 0 {
		how.Mode = uint64(perm)
	}
	var fd int
	var err error
	for {
		fd, err = unix.Openat2(dir, rel, &how)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
			noBeneath.Store(true)
		}
		return nil, false
	}
	return os.NewFile(uintptr(fd), r.Name()+string(filepath.Separator)+rel), true
}

// statBeneath is os.Root's Stat (Lstat when nofollow) in one openat2
// call, an fstat and a close; ok as for openBeneath.
func statBeneath(r *os.Root, rel string, nofollow bool) (fs.FileInfo, bool) {
	flag := unix.O_PATH
	if nofollow {
		flag |= unix.O_NOFOLLOW
	}
	f, ok := openBeneath(r, rel, flag, 0)
	if !ok {
		return nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	return st, err == nil
}

// readBeneath is os.Root's ReadFile through openBeneath; ok as for it.
func readBeneath(r *os.Root, rel string) ([]byte, bool, error) {
	f, ok := openBeneath(r, rel, os.O_RDONLY, 0)
	if !ok {
		return nil, false, nil
	}
	defer f.Close()
	size := 512
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		size = int(st.Size()) + 1
	}
	data := make([]byte, 0, size)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, true, nil
		}
		if err != nil {
			return nil, true, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}
