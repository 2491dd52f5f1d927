package main

import (
	"io"
	"os"
)

// isTerminalReader reports whether r is a terminal a person types into.
func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
