package livelog

import "os"

// openFile is os.OpenFile (see open_unix.go).
func openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

// readFile is os.ReadFile.
func readFile(name string) ([]byte, error) { return os.ReadFile(name) }
