package retention

import (
	"fmt"

	"github.com/nexus-memory/nexus/person"
	"github.com/nexus-memory/nexus/vault"
)

// ErrNoItem is returned when no pending item has the given id.
var ErrNoItem = fmt.Errorf("no such review item: %w", vault.ErrNotFound)

// ErrNoSnapshot is returned when no snapshot has the given id (or there is
// no snapshot at all).
var ErrNoSnapshot = fmt.Errorf("no such snapshot: %w", vault.ErrNotFound)

// ErrApply is wrapped by the error of an approval whose apply failed (a
// full memory, a scan hit, a duplicate fact): the item stays pending, with
// the reason recorded in its file.
var ErrApply = fmt.Errorf("approved item could not be applied; it stays pending: %w", vault.ErrRefused)

// ErrSnapshotCorrupt is returned when a snapshot's stored files do not match
// its manifest; nothing is restored.
var ErrSnapshotCorrupt = fmt.Errorf("snapshot does not match its manifest: %w", vault.ErrRefused)

// ErrUnsigned is wrapped when a decision needs a person's signature and
// has no valid one.
var ErrUnsigned = person.ErrUnsigned
