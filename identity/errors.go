package identity

import (
	"errors"
	"fmt"

	"github.com/nexus-memory/nexus/vault"
)

// ErrBadName is returned for an agent name that is not a safe slug:
// lowercase ASCII letters, digits, '-' and '_', starting with a letter or
// digit, at most 64 characters. It wraps [vault.ErrInvalid].
var ErrBadName = fmt.Errorf("agent name must be 1-64 of a-z, 0-9, '-', '_', starting with a letter or digit: %w", vault.ErrInvalid)

// ErrExists is returned when creating an agent that already exists.
var ErrExists = errors.New("agent already exists")

// ErrNoAgent is returned for an agent that has no IDENTITY.md. It wraps
// [vault.ErrNotFound].
var ErrNoAgent = fmt.Errorf("no such agent: %w", vault.ErrNotFound)

// NoAgentError is the error for an agent name that has no IDENTITY.md in
// the vault. It matches [ErrNoAgent] (and so [vault.ErrNotFound]) with
// [errors.Is]; callers that want the name use [errors.As].
type NoAgentError struct {
	// Name is the agent name asked for.
	Name string
}

func (e *NoAgentError) Error() string { return fmt.Sprintf("no agent named %q", e.Name) }

// Is makes errors.Is(err, ErrNoAgent) and errors.Is(err, vault.ErrNotFound)
// hold.
func (e *NoAgentError) Is(target error) bool {
	return target == ErrNoAgent || target == vault.ErrNotFound
}

// ErrMalformed is returned by [Load] when IDENTITY.md's frontmatter does
// not parse (a person's typo). The returned Identity still holds the name
// and the file's text as its body.
var ErrMalformed = errors.New("IDENTITY.md is malformed")

// ErrKey is returned when a key file is missing, unreadable or does not
// match the public key in IDENTITY.md.
var ErrKey = errors.New("signing key problem")

// ErrKeyMissing is returned by [SignerFor] when this machine's private key
// file is gone although IDENTITY.md lists a key for this device: signing
// with a new key then would make a new identity without anyone deciding
// it. It wraps [ErrKey]. Restore the key from a backup, or make a new one
// deliberately with [NewDeviceKey] ('nexus agent new-key').
var ErrKeyMissing = fmt.Errorf("private key missing: %w", ErrKey)

// ErrKeyExists is returned by [NewDeviceKey] when the agent's key file
// here is a usable key: it is never replaced (it signed entries).
var ErrKeyExists = errors.New("agent has a usable key on this machine")

// ErrTokenExists is returned by [NewToken] when the agent already has a
// token and rotate is false.
var ErrTokenExists = errors.New("agent already has a token (rotate it to replace it)")

// ErrBadToken is returned when a bearer token matches no agent.
var ErrBadToken = errors.New("unknown or revoked token")

// ErrNoKeyToRotate is returned by [RotateKey] when this machine has no
// usable key for the agent: a rotation must be signed by the old key.
var ErrNoKeyToRotate = errors.New("no key on this machine to rotate")
