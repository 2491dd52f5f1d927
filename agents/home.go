package agents

import (
	"fmt"
	"os"
	"time"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

// Profile home layout, relative to agents/NAME/.
const (
	MemoryFile     = "MEMORY.md"
	UserFile       = "USER.md"
	FactsDir       = "memory"
	IndexFile      = "memory/INDEX.md"
	CheckpointsDir = "checkpoints"
)

// Add creates a new agent: its identity and signing key (see
// [identity.Create]) and its profile home folders. It fails with
// [identity.ErrExists] if the agent exists.
func Add(v *vault.Vault, name, role string, now time.Time) (*identity.Identity, error) {
	id, err := identity.Create(v, name, role, now)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{FactsDir, CheckpointsDir} {
		if err := os.MkdirAll(v.MustPath(identity.Home(name)+"/"+d), 0o755); err != nil {
			return nil, fmt.Errorf("create home of %s: %w", name, err)
		}
	}
	return id, nil
}

// HomePath returns the vault-relative path of a file in an agent's home.
func HomePath(name, file string) string { return identity.Home(name) + "/" + file }
