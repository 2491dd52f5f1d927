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

// isTerminal reports whether w is a terminal (through the syncWriter
// every command's stderr is wrapped in).
func isTerminal(w io.Writer) bool {
	f, ok := unwrapWriter(w).(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// unwrapWriter is the writer under the syncWriter every command's stderr
// is wrapped in.
func unwrapWriter(w io.Writer) io.Writer {
	if s, ok := w.(*syncWriter); ok {
		return s.w
	}
	return w
}
