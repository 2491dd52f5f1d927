package livelog

import (
	"os"

	"github.com/nexus-memory/nexus/vault"
)

// openFile is os.OpenFile (see open_unix.go).
func openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return vault.OpenFile(name, flag, perm)
}

// readFile is os.ReadFile.
func readFile(name string) ([]byte, error) { return vault.ReadFile(name) }
