package livelog

import (
	"errors"
	"fmt"

	"github.com/nexus-memory/nexus/vault"
)

// ErrCorrupt is returned when the log or a state file cannot be understood
// well enough to continue safely (for example a cursor that points into
// nothing). The markdown itself is never rewritten to "fix" it.
var ErrCorrupt = errors.New("live log is corrupt")

// ErrTooLarge wraps [vault.ErrInvalid] for a summary, body or field above
// its size limit. Nothing was written.
var ErrTooLarge = vault.ErrTooLarge

// ErrNoCheckpoint is returned by [LoadCheckpoint] when an agent has not saved
// a checkpoint yet. It wraps [vault.ErrNotFound].
var ErrNoCheckpoint = fmt.Errorf("no checkpoint saved: %w", vault.ErrNotFound)

// ErrNoDecision is returned when a decision id (for example in
// Decision.Supersedes) names no recorded decision. It wraps
// [vault.ErrNotFound].
var ErrNoDecision = fmt.Errorf("no such decision: %w", vault.ErrNotFound)

// ErrNothingToTrust is returned by [Log.TrustPlan] for a writer whose
// device has no key in its agent's IDENTITY.md.
var ErrNothingToTrust = errors.New("no key to trust")
