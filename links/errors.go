package links

import "errors"

// ErrNoNote is returned by [Find] when no file is named by its argument.
var ErrNoNote = errors.New("no such note")
