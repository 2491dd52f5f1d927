package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/retention"
)

func init() {
	register(newSnapshotCmd)
	register(newRollbackCmd)
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
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := g.openVault()
			if err != nil {
				return err
			}
			snaps, err := retention.ListSnapshots(v)
			if err != nil {
				return err
			}
			snaps = nonNil(snaps)
			return g.emit(snaps, nil, func(w io.Writer) {
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
		},
	}
	cmd.AddCommand(list)
	return cmd
}

func newRollbackCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "rollback [ID]",
		Short: "Undo a bulk change: restore a snapshot (default: the newest)",
		Long: `Restore the files of snapshot ID (default: the newest) byte for byte, with
their modes and modification times; files the change created are removed.
Every stored copy is checked against the manifest first, and the state the
rollback replaces is itself snapshotted, so running 'nexus rollback' again
undoes the rollback.

Only a person rolls back: it refuses to run with --agent or $NEXUS_AGENT.

Example:
  nexus snapshot list
  nexus rollback
  nexus rollback s-20261129T150501123Z-3f9c2a`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
			res, err := retention.Rollback(v, id, g.now())
			if err != nil {
				return err
			}
			return g.emit(res, nil, func(w io.Writer) {
				fmt.Fprintf(w, "Restored %d files from %s (%s).\nThe replaced state is snapshot %s; 'nexus rollback %s' undoes this.\n",
					len(res.Restored.Files), res.Restored.ID, res.Restored.Reason, res.Taken.ID, res.Taken.ID)
			})
		},
	}
}
