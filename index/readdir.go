package index

import (
	"os"
	"strings"

	"github.com/nexus-memory/nexus/vault"
)

// dirNote is a markdown file found in a folder, with its size and mtime.
type dirNote struct {
	name string // the folder's prefix and the file's name
	st   fileState
}

// isNoteName reports whether a file name is a note's: .md (or a canvas's
// .canvas) in any case, not hidden.
func isNoteName(name string) bool {
	return !strings.HasPrefix(name, ".") && (len(name) > 3 && strings.EqualFold(name[len(name)-3:], ".md") ||
		len(name) > 7 && strings.EqualFold(name[len(name)-7:], ".canvas"))
}

// sortNotes appends the notes (regular .md files) and the sub-folders
// among a folder's entries to notes and dirs, each name after prefix,
// leaving out dot-files and dot-folders. stat gives a note's size and
// mtime; false drops it (gone since the listing).
func sortNotes(entries []os.DirEntry, prefix string, notes []dirNote, dirs []string, stat func(os.DirEntry) (fileState, bool)) ([]dirNote, []string) {
	for _, d := range entries {
		name := d.Name()
		switch {
		case strings.HasPrefix(name, "."):
		case d.IsDir():
			dirs = append(dirs, prefix+name)
		case d.Type().IsRegular() && isNoteName(name):
			if st, ok := stat(d); ok {
				notes = append(notes, dirNote{prefix + name, st})
			}
		}
	}
	return notes, dirs
}

// readNotesDirPortable is readNotesDir with an lstat of each note's path.
func readNotesDirPortable(dir, prefix string, notes []dirNote, dirs []string) ([]dirNote, []string, error) {
	entries, err := vault.ReadDir(dir)
	notes, dirs = sortNotes(entries, prefix, notes, dirs, func(d os.DirEntry) (fileState, bool) {
		info, err := d.Info()
		if err != nil {
			return fileState{}, false
		}
		return fileState{Size: info.Size(), Mtime: info.ModTime().UnixNano(), Ctime: ctimeOf(info)}, true
	})
	return notes, dirs, err
}
