package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/retention"
)

func init() {
	register("snapshot", newSnapshotCmd)
	register("rollback", newRollbackCmd)
}

func newSnapshotCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "List the snapshots taken before bulk changes",
		Long: `Every bulk change (review approve --all, rollback) first copies the files
it may change into .nexus/state/snapshots/ID/ with a manifest; 'nexus
rollback ID' puts them back. The newest snapshots_keep (config, default 20)
are kept.

Example:
  nexus snapshot list`,
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List snapshots, newest first",
		Long: `List snapshots, newest first: id, time, reason and how many files.

Example:
  nexus snapshot list
  nexus rollback s-20261129T150501123Z-3f9c2a`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runSnapshotList(g) },
	}
	cmd.AddCommand(list)
	return cmd
}

// runSnapshotList lists the snapshots, newest first.
func runSnapshotList(g *globals) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	snaps, err := retention.ListSnapshots(v)
	if err != nil {
		return err
	}
	snaps = nonNil(snaps)
	return g.emit(listOf("snapshots", snaps), nil, func(w io.Writer) {
		if len(snaps) == 0 {
			fmt.Fprintln(w, "No snapshots.")
			return
		}
		var tb table
		tb.row("ID", "TAKEN", "FILES", "REASON")
		for _, s := range snaps {
			tb.row(s.ID, fmtDate(s.Created), strconv.Itoa(len(s.Files)), s.Reason)
		}
		tb.write(w)
	})
}

// rollbackOptions are the flags of 'nexus rollback', and how it asks.
type rollbackOptions struct {
	dryRun, yes bool
	// interactive reports whether a person can answer a question: stdin
	// and stderr are a terminal. Tests inject it.
	interactive func() bool
}

func newRollbackCmd(g *globals) *cobra.Command {
	opts := &rollbackOptions{interactive: func() bool { return isTerminal(g.stderr) && isTerminalReader(g.stdin) }}
	cmd := &cobra.Command{
		Use:   "rollback [ID]",
		Short: "Undo a bulk change: restore a snapshot (default: the newest)",
		Long: `Restore the files of snapshot ID (default: the newest) byte for byte, with
their modes and modification times; files the change created are removed.
Every stored copy is checked against the manifest first, and the state the
rollback replaces is itself snapshotted, so running 'nexus rollback' again
undoes the rollback.

--dry-run lists each file of the snapshot and what the rollback would do to
it (restore, recreate, remove, unchanged), and changes nothing. Without
--yes, rollback shows the same list on a terminal and asks before it
changes anything; run from a script, a pipe or with --json it refuses and
asks for --yes (exit 2), so nothing is restored by accident.

Only a person rolls back: it refuses to run with --agent or $NEXUS_AGENT,
and with review.require_person_key set it asks for the passphrase of your
review key on the terminal and signs the rollback (docs/review.md).

Examples:
  nexus snapshot list
  nexus rollback --dry-run
  nexus rollback
  nexus rollback s-20261129T150501123Z-3f9c2a --yes`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runRollback(g, opts, args) },
	}
	f := cmd.Flags()
	f.BoolVarP(&opts.dryRun, "dry-run", "n", false, "list what would be restored and change nothing")
	f.BoolVarP(&opts.yes, "yes", "y", false, "restore without asking (needed when not on a terminal, and with --json)")
	return cmd
}

func runRollback(g *globals, opts *rollbackOptions, args []string) error {
	if err := personOnly(g); err != nil {
		return err
	}
	v, err := g.openVault()
	if err != nil {
		return err
	}
	id := ""
	if len(args) == 1 {
		id = args[0]
	}
	plan, err := retention.PlanRollback(v, id)
	if err != nil {
		return err
	}
	if opts.dryRun {
		return g.emit(struct {
			DryRun bool `json:"dry_run"`
			retention.RollbackPlan
		}{true, plan}, nil, func(w io.Writer) {
			writeRollbackPlan(w, plan)
			fmt.Fprintf(w, "Dry run: nothing changed. To restore: nexus rollback %s --yes\n", plan.ID)
		})
	}
	if !opts.yes {
		if g.json || !opts.interactive() {
			how := "this is not a terminal"
			if g.json {
				how = "--json does not ask"
			}
			return usagef("rollback would restore %s from snapshot %s and asks first, but %s: add --yes to go ahead ('nexus rollback %s --dry-run' lists them)",
				plural(len(plan.Files), "file", "files"), plan.ID, how, plan.ID)
		}
		writeRollbackPlan(g.stderr, plan)
		fmt.Fprintf(g.stderr, "Restore %s from %s? The state they replace is snapshotted first. [y/N] ", plural(len(plan.Files), "file", "files"), plan.ID)
		if !confirmed(g.stdin) {
			fmt.Fprintln(g.stderr)
			return refusedf("rollback cancelled; nothing changed")
		}
	}
	signer, err := signerFor(g, v)
	if err != nil {
		return err
	}
	res, err := retention.RollbackSigned(v, plan.ID, retention.Decision{Now: g.now(), Signer: signer})
	if err != nil {
		return err
	}
	return g.emit(res, nil, func(w io.Writer) {
		fmt.Fprintf(w, "Restored %s from %s (%s).\nThe replaced state is snapshot %s; 'nexus rollback %s' undoes this.\n",
			plural(len(res.Restored.Files), "file", "files"), res.Restored.ID, res.Restored.Reason, res.Taken.ID, res.Taken.ID)
	})
}

// writeRollbackPlan lists what a rollback does, file by file.
func writeRollbackPlan(w io.Writer, plan retention.RollbackPlan) {
	fmt.Fprintf(w, "Snapshot %s, taken %s (%s):\n", plan.ID, fmtDate(plan.Created), plan.Reason)
	var tb table
	tb.row("CHANGE", "FILE")
	for _, f := range plan.Files {
		tb.row(f.Change, f.Path)
	}
	tb.write(w)
	fmt.Fprintf(w, "%s of %d would change.\n", plural(plan.Changes, "file", "files"), len(plan.Files))
}

// confirmed reads one line of an answer from r: yes only for y or yes.
func confirmed(r io.Reader) bool {
	if r == nil {
		return false
	}
	line, _ := bufio.NewReader(io.LimitReader(r, 1024)).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}
