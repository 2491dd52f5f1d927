package vault

import (
	"errors"
	"fmt"

	"github.com/nexus-memory/nexus/internal/atomicfile"
	"github.com/nexus-memory/nexus/internal/scan"
)

// ErrNotVault is returned when a folder is not a Nexus vault (it has no
// .nexus/ folder) and no vault is found above it.
var ErrNotVault = errors.New("not a Nexus vault (no .nexus/ folder here or above; run 'nexus init')")

// ErrUnsafePath is returned for a vault-relative path that is absolute,
// climbs out with "..", resolves through a symlink to outside the vault, or
// is otherwise not a plain path inside it.
var ErrUnsafePath = errors.New("path is outside the vault")

// ErrNotFound is returned when a named file or item does not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a file changed on disk between reading it and
// replacing it (see [ReplaceIf]). Callers re-read and retry.
var ErrConflict = atomicfile.ErrConflict

// ErrInvalid is wrapped by errors that reject bad input: empty or oversized
// text, invalid UTF-8, a bad name. Nothing was written.
var ErrInvalid = errors.New("invalid input")

// ErrTooLarge is wrapped by errors for text above its size limit. It wraps
// [ErrInvalid] (the input is rejected, nothing was written); the command
// line reports it as a refused operation (a limit, SPEC §8), not bad usage.
var ErrTooLarge = fmt.Errorf("too large: %w", ErrInvalid)

// ErrRefused is wrapped by errors for operations the rules refuse: a limit,
// a security scan hit, no unique match. Nothing was written. It is the
// security scan's sentinel (the scan, a leaf helper, declares it).
var ErrRefused = scan.ErrRefused

// ErrLockTimeout is wrapped by [*LockTimeoutError]: a lock was not free
// within the bound. Nothing was done; the command may be run again.
var ErrLockTimeout = errors.New("lock not free in time")

// ErrReadOnly is wrapped by lock errors that come from not being able to
// write the vault's machine-local state at all: the lock folder or file is
// not writable by this user, the file system is read-only, or something
// that is not a folder stands where the lock folder should be. Read-only
// commands that only meant to refresh derived state (a witness, an index
// file, a cache) go on without it; see [IsReadOnly].
var ErrReadOnly = errors.New("no write access to the vault's state")

// ErrCopiedVault is wrapped by the refusal to write under this machine's
// device name in a vault folder copied whole from another machine (SPEC §4
// "A device is a machine, not a name"): the copy carries the other
// machine's device name and keys. Nothing was written; 'nexus device name
// NAME' gives this machine a name of its own.
var ErrCopiedVault = fmt.Errorf("vault folder copied from another machine: %w", ErrRefused)

// ErrDeviceTaken is wrapped by the refusal to write under a device name
// that another machine claimed first (log/devices/NAME.md). Nothing was
// written.
var ErrDeviceTaken = fmt.Errorf("device name taken by another machine: %w", ErrRefused)
