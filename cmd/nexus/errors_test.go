package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nexus-memory/nexus/index/holder"
	"github.com/nexus-memory/nexus/vault"
)

// TestExitCodeOfErrors: what an error from the library means for the exit
// code, as docs/cli.md "Exit codes" says. The command tree's table test
// covers the errors each command can reach; these are the ones it cannot
// provoke cheaply (a stopped index holder takes 10 s to give up on).
func TestExitCodeOfErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"refused", errors.New("no match for --old"), exitRefused},
		{"invalid input", fmt.Errorf("summary is empty: %w", vault.ErrInvalid), exitUsage},
		{"too large", fmt.Errorf("fact body: %w", vault.ErrTooLarge), exitRefused},
		{"lock held past its timeout", fmt.Errorf("append: %w", vault.ErrLockTimeout), exitUnsure},
		{"could not check", couldNotCheck(errors.New("permission denied")), exitUnsure},
		{"index held by a process that does not answer", fmt.Errorf("open index: %w (ping timed out)", holder.ErrBusy), exitUnsure},
		{"index holder fell silent mid-search", fmt.Errorf("search: %w", holder.ConnError{Err: errors.New("index holder (pid 7) sent nothing for 10s")}), exitUnsure},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := &globals{ran: true}
			if got := g.exitCode(c.err); got != c.want {
				t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
			}
		})
	}
}
