//go:build !linux && !darwin

package index

func readNotesDir(dir string) ([]dirNote, []string, error) { return readNotesDirPortable(dir) }
