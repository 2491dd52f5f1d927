package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// logTrustOptions are the flags of 'nexus log trust'.
type logTrustOptions struct {
	yes bool // --yes
	// interactive reports whether a person can answer a question: stdin
	// and stderr are a terminal. Tests inject it.
	interactive func() bool
}

func newLogTrustCmd(g *globals) *cobra.Command {
	o := &logTrustOptions{interactive: func() bool { return isTerminal(g.stderr) && isTerminalReader(g.stdin) }}
	cmd := &cobra.Command{
		Use:   "trust WRITER",
		Short: "Accept a writer's new key or new device (named \"key changed\" or \"new writer\" by log verify)",
		Long: `Each machine pins the key of every writer (AGENT@DEVICE) the first time it
sees the writer's signed entries, in .nexus/state/ (never synced), like
SSH's known_hosts: IDENTITY.md can be written by anyone who can write the
vault, so it is not trusted on its own. When a pinned writer's entries are
signed with another key ("key changed"), or an agent this machine knows
writes from a device it has not pinned ("new writer"), 'log verify' and
'doctor' name those entries until a person accepts the key here.

trust shows the fingerprints this machine accepts for WRITER now and those
it will accept (the keys IDENTITY.md lists for the writer's device), asks
on a terminal, and pins them; keys pinned before stay accepted. It also
takes the writer's feed as it is now: what this machine saw of it before
(a rewrite or a rollback named by verify) is no longer reported. Check the
new fingerprint with the machine that made the key ('nexus agent show
AGENT' there) before you accept it: a key you did not make means someone wrote
IDENTITY.md and the feed.

A key changed with 'nexus agent rotate-key' needs no trust: the new key is
signed by the old one. Run from a script, a pipe or with --json, trust
asks for --yes (exit 2). Only a person trusts: it refuses to run with
--agent or $NEXUS_AGENT.

Examples:
  nexus log verify
  nexus log trust lyra@laptop
  nexus log trust lyra@laptop --yes --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runLogTrust(g, o, args[0]) },
	}
	cmd.Flags().BoolVarP(&o.yes, "yes", "y", false, "accept without asking (needed when not on a terminal, and with --json)")
	return cmd
}

func runLogTrust(g *globals, o *logTrustOptions, writer string) error {
	if err := personOnly(g); err != nil {
		return err
	}
	l, err := g.openLog()
	if err != nil {
		return err
	}
	plan, err := l.TrustPlan(writer)
	if err != nil {
		return err
	}
	if !o.yes {
		if g.json || !o.interactive() {
			how := "this is not a terminal"
			if g.json {
				how = "--json does not ask"
			}
			return usagef("trust would pin %s for %s (pinned now: %s) and asks first, but %s: add --yes to go ahead",
				strings.Join(plan.New, ", "), writer, orNone(plan.Old), how)
		}
		writeTrustPlan(g.stderr, plan.Writer, plan.Old, plan.New)
		fmt.Fprintf(g.stderr, "Accept these keys for %s on this machine? [y/N] ", writer)
		if !confirmed(g.stdin) {
			fmt.Fprintln(g.stderr)
			return refusedf("trust cancelled; nothing changed")
		}
	}
	c, err := l.Trust(writer)
	if err != nil {
		return err
	}
	return g.emit(c, nil, func(w io.Writer) {
		writeTrustPlan(w, c.Writer, c.Old, c.New)
		fmt.Fprintf(w, "Trusted %s on this machine.\n", c.Writer)
	})
}

func writeTrustPlan(w io.Writer, writer string, old, nw []string) {
	fmt.Fprintf(w, "%s\n  pinned now: %s\n  after:      %s\n", writer, orNone(old), strings.Join(nw, ", "))
}

func orNone(ss []string) string {
	if len(ss) == 0 {
		return "(none)"
	}
	return strings.Join(ss, ", ")
}
