//go:build !linux && !darwin

package index

func readNotesDir(dir, prefix string, notes []dirNote, dirs []string) ([]dirNote, []string, error) {
	return readNotesDirPortable(dir, prefix, notes, dirs)
}
