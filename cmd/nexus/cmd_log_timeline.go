package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/livelog"
)

// logTimelineOptions are the flags of 'nexus log timeline'.
type logTimelineOptions struct {
	last int // -n, --last
}

func newLogTimelineCmd(g *globals) *cobra.Command {
	var o logTimelineOptions
	cmd := &cobra.Command{
		Use:   "timeline",
		Short: "Write log/timeline.local.md: the newest entries of every feed, merged, for reading in Obsidian",
		Long: `Write log/timeline.local.md, a readable view of the live log for Obsidian:
the newest entries of every feed (default 200, at most 10,000) merged in
the log's order, a heading per day, quarantined entries shown as their
notice. The file is derived and this machine's own: it is rewritten from
the feeds, never edited, and the ignore rules 'nexus init' writes keep git
and Syncthing from carrying it. 'nexus watch' and 'nexus serve' keep it
current by themselves; this command is for vaults where neither runs. The
file is written only when its text changed, and not at all while the log
is empty.

Example:
  nexus log timeline
  nexus log timeline --last 50`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runLogTimeline(g, o) },
	}
	cmd.Flags().IntVarP(&o.last, "last", "n", livelog.DefaultTimelineEntries, "how many of the newest entries to show")
	return cmd
}

// runLogTimeline writes log/timeline.local.md when its text changed.
func runLogTimeline(g *globals, o logTimelineOptions) error {
	if o.last < 1 || o.last > maxTimelineEntries {
		return usagef("--last must be between 1 and %d, not %d", maxTimelineEntries, o.last)
	}
	l, err := g.openLog()
	if err != nil {
		return err
	}
	res, err := l.WriteTimeline(o.last)
	if err != nil {
		return err
	}
	return g.emit(res, nil, func(w io.Writer) {
		switch {
		case res.Entries == 0 && !res.Changed:
			fmt.Fprintln(w, "The log is empty; no timeline written.")
		case res.Changed:
			fmt.Fprintf(w, "Wrote %s (%s).\n", res.Path, plural(res.Entries, "entry", "entries"))
		default:
			fmt.Fprintf(w, "%s is up to date (%s).\n", res.Path, plural(res.Entries, "entry", "entries"))
		}
	})
}

// maxTimelineEntries bounds the timeline note: Obsidian opens a note of
// 10,000 entries comfortably; more belongs in 'nexus log read'.
const maxTimelineEntries = 10_000
