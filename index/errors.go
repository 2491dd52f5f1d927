package index

import (
	"errors"

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
