package index

import (
	"errors"
	"fmt"

	"github.com/nexus-memory/nexus/index/holder"
)

// ErrBusy is returned when another process holds the index and cannot be
// reached to answer for it (it is starting up, or hung). Retry later.
var ErrBusy = holder.ErrBusy

// ErrClosed is returned by calls on a closed [Index].
var ErrClosed = errors.New("search index is closed")

// ErrReadOnly is returned by [Index.Rebuild] when the vault's .nexus/index
// cannot be written (searches still work: see [Index.ReadOnly]).
var ErrReadOnly = errors.New("the vault's .nexus/index folder cannot be written (read-only vault); searches use the index as it is while it is fresh, else one built in memory")

// ErrDamaged is returned when the index's files are damaged in a way
// bleve does not check for (it panics reading them: a disk error, a
// sync tool that copied .nexus/index half-way). The index is derived
// state: opening it recreates it, and 'nexus index rebuild' replaces it.
var ErrDamaged = errors.New("search index damaged")

// unpanic turns a panic of f, bleve reading damaged index files, into
// an error wrapping ErrDamaged.
func unpanic(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v (run 'nexus index rebuild')", ErrDamaged, r)
		}
	}()
	return f()
}
