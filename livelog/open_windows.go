package livelog

import "github.com/nexus-memory/nexus/vault"

// readFile is os.ReadFile.
func readFile(name string) ([]byte, error) { return vault.ReadFile(name) }
