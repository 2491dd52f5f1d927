package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// direntBufs holds the buffers readNotesDir reads folder entries into.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// readNotesDir appends the notes (regular .md files) and the sub-folders
// of a folder to notes and dirs, each name after prefix, leaving out
// dot-files and dot-folders. The freshness walk of a
// vault is nothing but these calls, so it goes to the system calls
// directly: getdents64 into a reused buffer (no entry objects for files
// that are not notes) and an fstatat relative to the open folder for each
// note, not an lstat of the whole path.
func readNotesDir(dir, prefix string, notes []dirNote, dirs []string) ([]dirNote, []string, error) {
	fd, err := openDir(dir)
	if err != nil {
		return notes, dirs, err
	}
	defer unix.Close(fd)
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var st unix.Stat_t
	for {
		n, err := unix.Getdents(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return notes, dirs, &os.PathError{Op: "readdirent", Path: dir, Err: err}
		}
		if n <= 0 {
			return notes, dirs, nil
		}
		for off := 0; off+19 <= n; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen < 19 || off+reclen > n {
				return notes, dirs, &os.PathError{Op: "readdirent", Path: dir, Err: unix.EIO}
			}
			typ := buf[off+18]
			nameB := buf[off+19 : off+reclen]
			if i := bytes.IndexByte(nameB, 0); i >= 0 {
				nameB = nameB[:i]
			}
			off += reclen
			if len(nameB) == 0 || nameB[0] == '.' {
				continue // dot-files, dot-folders, . and ..
			}
			isDir := typ == unix.DT_DIR
			note := (typ == unix.DT_REG || typ == unix.DT_UNKNOWN) && isNoteNameBytes(nameB)
			if !isDir && !note && typ != unix.DT_UNKNOWN {
				continue
			}
			name := prefix + string(nameB)
			if isDir {
				dirs = append(dirs, name)
				continue
			}
			if !fstatat(fd, name[len(prefix):], &st) {
				continue // gone since the listing
			}
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFREG:
				if note {
					notes = append(notes, dirNote{name, fileState{Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}})
				}
			case unix.S_IFDIR:
				dirs = append(dirs, name) // DT_UNKNOWN: a file system without types
			}
		}
	}
}

func openDir(dir string) (int, error) {
	for {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: dir, Err: err}
		}
		return fd, nil
	}
}

func fstatat(fd int, name string, st *unix.Stat_t) bool {
	for {
		err := unix.Fstatat(fd, name, st, unix.AT_SYMLINK_NOFOLLOW)
		if !errors.Is(err, unix.EINTR) {
			return err == nil
		}
	}
}

// isNoteNameBytes is isNoteName of a name not yet made a string.
func isNoteNameBytes(b []byte) bool {
	return isNoteName(unsafe.String(unsafe.SliceData(b), len(b)))
}
