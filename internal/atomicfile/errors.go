package atomicfile

import (
	"errors"
	"fmt"
	"path/filepath"
)

// ErrConflict is returned by [ReplaceIf] when the file no longer holds the
// bytes the caller read: someone (a person in an editor, another process)
// saved it in between. The caller should re-read and start over.
var ErrConflict = errors.New("file changed on disk while it was being updated")

// DurabilityError is returned when the write itself landed — the rename is
// done, path holds the new bytes and every reader sees them — but a step
// after it that makes the rename survive a power loss failed (the folder's
// fsync reported an I/O error, say). The write must not be reported or
// retried as one that did not happen: a retried append would add its
// entry twice. The next write in the same folder that fsyncs it makes
// this one durable too.
//
// A folder fsync that the file system does not support at all (exFAT,
// SMB and some FUSE mounts answer ENOTSUP or EINVAL) is not an error:
// [SyncDir] returns nil for it.
type DurabilityError struct {
	Path string // the file that was written
	Err  error  // what failed after the rename
}

func (e *DurabilityError) Error() string {
	return fmt.Sprintf("%s is written, but not known to be on disk: %v", filepath.Base(e.Path), e.Err)
}

func (e *DurabilityError) Unwrap() error { return e.Err }

// Written reports whether a write that returned err left the file holding
// the new bytes: err is nil or a [*DurabilityError].
func Written(err error) bool {
	var de *DurabilityError
	return err == nil || errors.As(err, &de)
}

// afterRename wraps an error from the steps after the rename into path.
func afterRename(path string, err error) error {
	if err == nil {
		return nil
	}
	return &DurabilityError{Path: path, Err: err}
}
