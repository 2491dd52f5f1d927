package agents

import (
	"errors"
	"fmt"

	"github.com/nexus-memory/nexus/vault"
)

// ErrOverLimit is matched (with [errors.Is]) by the error of a bounded-memory
// write refused because the file would grow past its character limit. The
// error also matches [vault.ErrRefused].
var ErrOverLimit = errors.New("over the memory limit")

// ErrNoMatch is matched by the error of a replace or remove whose old_text
// matches no entry. The error also matches [vault.ErrRefused].
var ErrNoMatch = errors.New("old_text matches no entry")

// ErrAmbiguous is matched by the error of a replace or remove whose
// old_text matches several different entries. The error also matches
// [vault.ErrRefused].
var ErrAmbiguous = errors.New("old_text matches several entries")

// ErrBadTarget is returned for a memory target other than "memory" or
// "user". It wraps [vault.ErrInvalid].
var ErrBadTarget = fmt.Errorf(`target must be "memory" or "user": %w`, vault.ErrInvalid)

// ErrFactExists is returned when a new fact has the name of an existing one
// (names compared case-insensitively after NFC). Pass FactInput.Update to
// replace it, or choose another name.
var ErrFactExists = fmt.Errorf("a fact with that name exists: %w", vault.ErrRefused)

// ErrNoFact is returned when a fact does not exist.
var ErrNoFact = fmt.Errorf("no such fact: %w", vault.ErrNotFound)

// ErrIndexFull is returned when memory/INDEX.md would have more lines than
// the config's memory_index_line_limit. The error says how many facts there
// are and what to do: merge related facts, or archive ones no longer needed.
var ErrIndexFull = fmt.Errorf("memory index is full: %w", vault.ErrRefused)

// memError is an error whose text is written for the agent (it becomes
// Result.Error as is) and which matches a kind and a class sentinel.
type memError struct {
	msg     string
	kinds   []error
	matches []string // previews of the entries an ambiguous old_text matched
}

func (e *memError) Error() string   { return e.msg }
func (e *memError) Unwrap() []error { return e.kinds }

// refused returns an error matching vault.ErrRefused and kind.
func refused(kind error, msg string) error {
	return &memError{msg: msg, kinds: []error{kind, vault.ErrRefused}}
}

// invalid returns an error matching vault.ErrInvalid.
func invalid(msg string) error {
	return &memError{msg: msg, kinds: []error{vault.ErrInvalid}}
}

// ErrSection reports a section name that is not one of [SectionNames].
var ErrSection = errors.New("no such prompt section")
