package main

import (
	"fmt"
	"io"
	"strings"
)

// maxStdin is the most text a command reads from stdin. It is above every
// limit of what the text is read for, so that the limit's own message can
// say how big the text is; more than this is refused here.
const maxStdin = 16 << 20

// textArgs returns the text a command's TEXT... arguments give, the same
// way for every command: the words joined by single spaces (as if they had
// been quoted), or, for a lone "-", what stdin holds. what names the text
// for messages ("the summary").
func (g *globals) textArgs(args []string, what string) (string, error) {
	if len(args) == 1 && args[0] == "-" {
		return g.readStdin(what)
	}
	return strings.Join(args, " "), nil
}

// readStdin reads all of stdin, at most maxStdin bytes, for what.
func (g *globals) readStdin(what string) (string, error) {
	if g.stdin == nil {
		return "", nil
	}
	data, err := io.ReadAll(io.LimitReader(g.stdin, maxStdin+1))
	if err != nil {
		return "", fmt.Errorf("read %s from stdin: %w", what, err)
	}
	if len(data) > maxStdin {
		return "", refusedf("%s on stdin is over %s, more than any command takes; nothing was written", what, humanBytes(maxStdin))
	}
	return string(data), nil
}

// refusedError is a refusal found in cmd itself (exit 1).
type refusedError struct{ msg string }

func (e refusedError) Error() string { return e.msg }

func refusedf(format string, a ...any) error { return refusedError{fmt.Sprintf(format, a...)} }
