package atomicfile

import "errors"

// ErrConflict is returned by [ReplaceIf] when the file no longer holds the
// bytes the caller read: someone (a person in an editor, another process)
// saved it in between. The caller should re-read and start over.
var ErrConflict = errors.New("file changed on disk while it was being updated")
