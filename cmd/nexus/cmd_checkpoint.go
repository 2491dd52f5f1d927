package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/livelog"
)

func init() { register(newCheckpointCmd) }

func newCheckpointCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: "Save or show --agent's work checkpoint",
		Long: `A checkpoint is an agent's work context during long work — task, state,
next step, files touched, notes — so it can resume after a crash or in a new
session. It lives in agents/NAME/checkpoints/CURRENT.md (markdown with the
fields in its frontmatter); each save keeps the previous one under
checkpoints/history/.`,
	}
	cmd.AddCommand(newCheckpointSaveCmd(g), newCheckpointShowCmd(g))
	return cmd
}

func newCheckpointSaveCmd(g *globals) *cobra.Command {
	var c livelog.Checkpoint
	var notes []string
	cmd := &cobra.Command{
		Use:   "save",
		Short: "Replace CURRENT.md with a new checkpoint (the old one goes to history)",
		Long: `Save a checkpoint for --agent. --task is required. CURRENT.md is replaced
atomically; the previous CURRENT.md is kept, byte for byte, as
checkpoints/history/TIME.md.

Example:
  nexus --agent lyra checkpoint save --task "migrate db" --state "step 3/5 done" \
      --next "run step 4" --files db/migrate.go,db/schema.sql --note "backup at 14:00"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			agent, err := g.agentName()
			if err != nil {
				return err
			}
			if strings.TrimSpace(c.Task) == "" {
				return usagef("--task is required")
			}
			v, err := g.openVault()
			if err != nil {
				return err
			}
			c.Notes = strings.Join(notes, "\n\n")
			saved, err := livelog.SaveCheckpoint(v, agent, c, g.now())
			if err != nil {
				return err
			}
			return g.emit(saved, nil, func(w io.Writer) {
				fmt.Fprintf(w, "Saved checkpoint for %s in %s\n", agent, saved.Path)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.Task, "task", "", "what the agent is working on (required)")
	f.StringVar(&c.State, "state", "", "where it stands")
	f.StringVar(&c.Next, "next", "", "the next step")
	f.StringSliceVar(&c.Files, "files", nil, "files touched, comma-separated")
	f.StringArrayVar(&notes, "note", nil, "free notes (repeatable)")
	return cmd
}

func newCheckpointShowCmd(g *globals) *cobra.Command {
	var history bool
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show --agent's latest checkpoint (and earlier ones with --history)",
		Long: `Print --agent's current checkpoint. With --history, also list the earlier
checkpoints, newest first. Exit 1 if none was saved.

Example:
  nexus --agent lyra checkpoint show --history`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			agent, err := g.agentName()
			if err != nil {
				return err
			}
			v, err := g.openVault()
			if err != nil {
				return err
			}
			res := struct {
				Current *livelog.Checkpoint  `json:"current"`
				History []livelog.Checkpoint `json:"history,omitempty"`
			}{}
			cur, err := livelog.LoadCheckpoint(v, agent)
			if err != nil {
				return err
			}
			res.Current = cur
			if history {
				if res.History, err = livelog.CheckpointHistory(v, agent); err != nil {
					return err
				}
			}
			return g.emit(res, nil, func(w io.Writer) {
				printCheckpoint(w, cur)
				if history {
					fmt.Fprintf(w, "\nHistory (%d):\n", len(res.History))
					for _, h := range res.History {
						fmt.Fprintf(w, "  %s  %s  %s\n", h.Time.Format(time.RFC3339), h.Path, firstLineOf(h.Task))
					}
				}
			})
		},
	}
	cmd.Flags().BoolVar(&history, "history", false, "also list earlier checkpoints")
	return cmd
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
