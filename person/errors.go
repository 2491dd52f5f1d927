package person

import "errors"

// ErrPassphrase is returned when a passphrase does not open the key.
var ErrPassphrase = errors.New("the passphrase does not open this review key")

// ErrNoKey is returned when this machine holds no review key (of that
// name).
var ErrNoKey = errors.New("no person review key on this machine")

// ErrUnsigned is wrapped when a decision lacks a valid person signature.
var ErrUnsigned = errors.New("no valid person signature")
