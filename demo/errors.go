package demo

import (
	"fmt"

	"github.com/nexus-memory/nexus/vault"
)

// ErrDirNotEmpty is returned when Options.Dir names a folder that holds
// anything: the demo only ever writes into a new or empty folder, never over
// someone's notes. It wraps [vault.ErrInvalid].
var ErrDirNotEmpty = fmt.Errorf("demo folder must be new or empty: %w", vault.ErrInvalid)
