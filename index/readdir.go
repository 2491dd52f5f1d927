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

// readNotesDirPortable lists the notes (regular .md files) and the
// sub-folders of a folder, leaving out dot-files and dot-folders.
func readNotesDirPortable(dir string) (notes []dirNote, dirs []string, err error) {
	entries, err := os.ReadDir(dir)
	for _, d := range entries {
		name := d.Name()
		switch {
		case strings.HasPrefix(name, "."):
		case d.IsDir():
			dirs = append(dirs, name)
		case d.Type().IsRegular() && isNoteName(name):
			info, err := d.Info()
			if err != nil {
				continue // gone since the listing
			}
			notes = append(notes, dirNote{name, fileState{Size: info.Size(), Mtime: info.ModTime().UnixNano()}})
		}
	}
	return notes, dirs, err
}
