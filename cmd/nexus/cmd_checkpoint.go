package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/livelog"
)

func init() { register("checkpoint", newCheckpointCmd) }

func newCheckpointCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: "Save or show --agent's work checkpoint",
		Long: `A checkpoint is an agent's work context during long work — task, state,
next step, files touched, notes — so it can resume after a crash or in a new
session. It lives in agents/NAME/checkpoints/CURRENT.md (markdown with the
fields in its frontmatter); each save keeps the previous one under
checkpoints/history/. Limits: task, state and next 4 KiB each, notes
64 KiB, at most 200 files.

Examples:
  nexus --agent lyra checkpoint save --task "Migrate users" --state "steps 1-6 done" --next "step 7"
  nexus --agent lyra checkpoint show`,
	}
	cmd.AddCommand(newCheckpointSaveCmd(g), newCheckpointShowCmd(g))
	return cmd
}

// checkpointSaveOptions are the flags of 'nexus checkpoint save'.
type checkpointSaveOptions struct {
	task, state, next string
	files             []string
	notes             []string
}

func newCheckpointSaveCmd(g *globals) *cobra.Command {
	opts := &checkpointSaveOptions{}
	cmd := &cobra.Command{
		Use:   "save",
		Short: "Replace CURRENT.md with a new checkpoint (the old one goes to history)",
		Long: `Save a checkpoint for --agent. --task is required. CURRENT.md is replaced
atomically; the previous CURRENT.md is kept, byte for byte, as
checkpoints/history/TIME.md. --task, --state and --next take at most 4 KiB
each, the notes together 64 KiB, --files at most 200 paths.

Example:
  nexus --agent lyra checkpoint save --task "migrate db" --state "step 3/5 done" \
      --next "run step 4" --files db/migrate.go,db/schema.sql --note "backup at 14:00"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runCheckpointSave(g, opts) },
	}
	f := cmd.Flags()
	f.StringVar(&opts.task, "task", "", "what the agent is working on (required)")
	f.StringVar(&opts.state, "state", "", "where it stands")
	f.StringVar(&opts.next, "next", "", "the next step")
	f.StringSliceVar(&opts.files, "files", nil, "files touched, comma-separated")
	f.StringArrayVar(&opts.notes, "note", nil, "free notes (repeatable)")
	return cmd
}

func runCheckpointSave(g *globals, opts *checkpointSaveOptions) error {
	agent, err := g.agentName()
	if err != nil {
		return err
	}
	if strings.TrimSpace(opts.task) == "" {
		return usagef("--task is required")
	}
	v, err := g.openVault()
	if err != nil {
		return err
	}
	c := livelog.Checkpoint{
		Task:  opts.task,
		State: opts.state,
		Next:  opts.next,
		Files: opts.files,
		Notes: strings.Join(opts.notes, "\n\n"),
	}
	saved, err := livelog.SaveCheckpoint(v, agent, c, g.now())
	if err != nil {
		return err
	}
	return g.emit(saved, nil, func(w io.Writer) {
		fmt.Fprintf(w, "Saved checkpoint for %s in %s\n", agent, saved.Path)
		if saved.Quarantine != "" {
			fmt.Fprintf(w, "  note: quarantined (%s): the session that resumes it sees only a [QUARANTINED] line until a person sets \"quarantine: cleared\" in its frontmatter\n", saved.Quarantine)
		}
	})
}

// checkpointShowOptions are the flags of 'nexus checkpoint show'.
type checkpointShowOptions struct {
	history bool
	raw     bool
}

func newCheckpointShowCmd(g *globals) *cobra.Command {
	opts := &checkpointShowOptions{}
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show --agent's latest checkpoint (and earlier ones with --history)",
		Long: `Print --agent's current checkpoint. With --history, also list the earlier
checkpoints, newest first. Exit 1 if none was saved.

A checkpoint whose text hit the security scan's injection rules was kept
but is quarantined: it shows as [QUARANTINED: rule] unless --raw. A person
clears it by setting "quarantine: cleared" in CURRENT.md's frontmatter.

Example:
  nexus --agent lyra checkpoint show --history`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runCheckpointShow(g, opts) },
	}
	cmd.Flags().BoolVar(&opts.history, "history", false, "also list earlier checkpoints")
	cmd.Flags().BoolVar(&opts.raw, "raw", false, "show the text of a quarantined checkpoint")
	return cmd
}

// checkpointShowResult is what 'checkpoint show --json' prints.
type checkpointShowResult struct {
	Current *livelog.Checkpoint  `json:"current"`
	History []livelog.Checkpoint `json:"history,omitempty"`
}

func runCheckpointShow(g *globals, opts *checkpointShowOptions) error {
	agent, err := g.agentName()
	if err != nil {
		return err
	}
	v, err := g.openVault()
	if err != nil {
		return err
	}
	cur, err := livelog.LoadCheckpoint(v, agent)
	if err != nil {
		return err
	}
	res := checkpointShowResult{Current: cur}
	if opts.history {
		if res.History, err = livelog.CheckpointHistory(v, agent); err != nil {
			return err
		}
	}
	if !opts.raw {
		m := cur.Masked()
		cur, res.Current = &m, &m
		for i := range res.History {
			res.History[i] = res.History[i].Masked()
		}
	}
	return g.emit(res, nil, func(w io.Writer) {
		printCheckpoint(w, cur)
		if opts.history {
			fmt.Fprintf(w, "\nHistory (%d):\n", len(res.History))
			for _, h := range res.History {
				fmt.Fprintf(w, "  %s  %s  %s\n", h.Time.Format(time.RFC3339), h.Path, firstLineOf(h.Task))
			}
		}
	})
}

func printCheckpoint(w io.Writer, c *livelog.Checkpoint) {
	fmt.Fprintf(w, "Checkpoint of %s, saved %s (%s)\nTask:  %s\n", c.Agent, c.Time.Format(time.RFC3339), c.Path, c.Task)
	if c.State != "" {
		fmt.Fprintf(w, "State: %s\n", c.State)
	}
	if c.Next != "" {
		fmt.Fprintf(w, "Next:  %s\n", c.Next)
	}
	if len(c.Files) > 0 {
		fmt.Fprintf(w, "Files: %s\n", strings.Join(c.Files, ", "))
	}
	if c.Notes != "" {
		fmt.Fprintf(w, "Notes:\n%s\n", c.Notes)
	}
}

func firstLineOf(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
