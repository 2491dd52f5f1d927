//go:build darwin

package index

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/nexus-memory/nexus/vault"
)

// readNotesDir lists the notes (regular .md files) and the sub-folders of
// a folder, leaving out dot-files and dot-folders. It stats each note with
// fstatat relative to the open folder, instead of an lstat of the whole
// path, and does not sort the listing: the freshness walk of a
// 100,000-note vault is nothing but these calls, and this halves it.
func readNotesDir(dir, prefix string, notes []dirNote, dirs []string) ([]dirNote, []string, error) {
	f, err := vault.OpenRead(dir)
	if err != nil {
		return notes, dirs, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	fd := int(f.Fd()) // valid until f.Close, deferred above
	var st unix.Stat_t
	notes, dirs = sortNotes(entries, prefix, notes, dirs, func(d os.DirEntry) (fileState, bool) {
		serr := unix.Fstatat(fd, d.Name(), &st, unix.AT_SYMLINK_NOFOLLOW)
		for errors.Is(serr, unix.EINTR) {
			serr = unix.Fstatat(fd, d.Name(), &st, unix.AT_SYMLINK_NOFOLLOW)
		}
		if serr != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return fileState{}, false // gone (or replaced) since the listing
		}
		return fileState{Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}, true
	})
	return notes, dirs, err
}
