package index

import (
	"os"
	"strings"
)

// dirNote is a markdown file found in a folder, with its size and mtime.
type dirNote struct {
	name string
	st   fileState
}

// isNoteName reports whether a file name is a note's: .md in any case, not
// hidden.
func isNoteName(name string) bool {
	return !strings.HasPrefix(name, ".") && len(name) > 3 && strings.EqualFold(name[len(name)-3:], ".md")
}

// sortNotes lists the notes (regular .md files) and the sub-folders among
// a folder's entries, leaving out dot-files and dot-folders. stat gives a
// note's size and mtime; false drops it (gone since the listing).
func sortNotes(entries []os.DirEntry, stat func(os.DirEntry) (fileState, bool)) (notes []dirNote, dirs []string) {
	for _, d := range entries {
		name := d.Name()
		switch {
		case strings.HasPrefix(name, "."):
		case d.IsDir():
			dirs = append(dirs, name)
		case d.Type().IsRegular() && isNoteName(name):
			if st, ok := stat(d); ok {
				notes = append(notes, dirNote{name, st})
			}
		}
	}
	return notes, dirs
}

// readNotesDirPortable is readNotesDir with an lstat of each note's path.
func readNotesDirPortable(dir string) (notes []dirNote, dirs []string, err error) {
	entries, err := os.ReadDir(dir)
	notes, dirs = sortNotes(entries, func(d os.DirEntry) (fileState, bool) {
		info, err := d.Info()
		if err != nil {
			return fileState{}, false
		}
		return fileState{Size: info.Size(), Mtime: info.ModTime().UnixNano()}, true
	})
	return notes, dirs, err
}
