package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// isTerminalReader reports whether r is a terminal a person types into.
func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// isTerminal reports whether w is a terminal (through the syncWriter
// every command's stderr is wrapped in). A terminal, not any character
// device: /dev/null is one too, and cron jobs and scripts send their
// output there.
func isTerminal(w io.Writer) bool {
	f, ok := unwrapWriter(w).(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// unwrapWriter is the writer under the syncWriter every command's stderr
// is wrapped in.
func unwrapWriter(w io.Writer) io.Writer {
	if s, ok := w.(*syncWriter); ok {
		return s.w
	}
	return w
}

// redraws reports whether output to a terminal (tty) may redraw a line in
// place (a carriage return and the erase-to-end-of-line escape): not with
// TERM=dumb (Emacs shell buffers, some CI logs), nor with NO_COLOR, which
// asks for output free of escape codes. Everything else gets plain lines.
func redraws(tty bool, getenv func(string) string) bool {
	return tty && getenv("TERM") != "dumb" && getenv("NO_COLOR") == ""
}
