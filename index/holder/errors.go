package holder

import "errors"

// ErrBusy is returned when another process holds the index and cannot be
// reached to answer for it (it is starting up, or hung). Retry later.
var ErrBusy = errors.New("search index is held by another process that does not answer")
