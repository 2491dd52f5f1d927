package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/retention"
)

func init() { register("journey", newJourneyCmd) }

// journeyOptions are the flags of 'nexus journey'.
type journeyOptions struct {
	since string // --since
}

func newJourneyCmd(g *globals) *cobra.Command {
	var opts journeyOptions
	cmd := &cobra.Command{
		Use:   "journey [--agent NAME] [--since DATE]",
		Short: "One timeline of what agents learned: facts, reviews, decisions",
		Long: `Print one timeline, oldest first, of what agents learned and decided, read
from the files' own metadata: facts created, updated and archived, proposals
and who approved or rejected them (memory writes held for review included),
and the decision log. --agent NAME (else $NEXUS_AGENT, as for every
command; a filter from $NEXUS_AGENT alone is noted on stderr, and
NEXUS_AGENT= shows every agent) keeps one agent; --since DATE
(2026-11-01, 2026-11-01T10:30 or RFC 3339; see docs/cli.md) drops older
events.

Example:
  nexus journey --agent lyra --since 2026-11-01`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runJourney(g, opts) },
	}
	cmd.Flags().StringVar(&opts.since, "since", "", "only events at or after this date: "+dateHelp)
	return cmd
}

// runJourney prints the timeline of what agents learned.
func runJourney(g *globals, opts journeyOptions) error {
	agent, fromEnv := listAgent(g) // cmd_review.go
	o := retention.JourneyOptions{Agent: agent}
	var err error
	if o.Since, err = parseDateFlag("--since", opts.since, false); err != nil {
		return err
	}
	v, err := g.openVault()
	if err != nil {
		return err
	}
	if err := knownAgent(v, o.Agent); err != nil {
		return err // a typo must not read as "nothing learned"
	}
	evs, err := retention.Journey(v, o)
	if err != nil {
		return err
	}
	if fromEnv {
		noteEnvFilter(g, agent, "events")
	}
	res := struct {
		// Agent is the agent filter (--agent, else $NEXUS_AGENT).
		Agent  string            `json:"agent,omitempty"`
		Events []retention.Event `json:"events"`
	}{agent, nonNil(evs)}
	return g.emit(res, nil, func(w io.Writer) {
		if len(evs) == 0 {
			if agent != "" {
				fmt.Fprintf(w, "Nothing learned yet by %s.\n", agent)
				return
			}
			fmt.Fprintln(w, "Nothing learned yet.")
			return
		}
		for _, e := range evs {
			where := e.Path
			if e.Now != "" {
				where += ", now " + e.Now
			}
			fmt.Fprintf(w, "%s  %-8s %-14s %s  (%s)\n", e.Time.UTC().Format("2006-01-02 15:04"), e.Agent, e.Kind, e.Title, where)
		}
	})
}
