package agents

import (
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
// [identity.Create]). It fails with [identity.ErrExists] if the agent
// exists. The folders of the profile home (memory/, checkpoints/) are made
// by the first write into them, so Obsidian shows no empty folders.
func Add(v *vault.Vault, name, role string, now time.Time) (*identity.Identity, error) {
	return identity.Create(v, name, role, now)
}

// HomePath returns the vault-relative path of a file in an agent's home.
func HomePath(name, file string) string { return identity.Home(name) + "/" + file }
