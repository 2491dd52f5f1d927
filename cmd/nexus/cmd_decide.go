package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/livelog"
)

func init() {
	register("decide", newDecideCmd)
	register("decisions", newDecisionsCmd)
}

// decideOptions are the flags and arguments of 'nexus decide'.
type decideOptions struct {
	title      string
	decision   string
	rationale  string
	supersedes string
}

func newDecideCmd(g *globals) *cobra.Command {
	opts := &decideOptions{}
	cmd := &cobra.Command{
		Use:   "decide TITLE... | -",
		Short: "Record a signed decision in the agent's decision feed as --agent",
		Long: `Append a decision to the agent's decision feed on this machine,
log/decisions/AGENT@DEVICE.md, signed like the live log, with the next id
of that feed: AGENT@DEVICE:D-0001, :D-0002, ... (ids include the writer,
so two machines never issue the same one). --decision is required;
--rationale says why. --supersedes ID marks that earlier decision
superseded in listings (it stays in its file); ids of an older vault's
log/decisions.md (D-0003) still work. Superseding a decision that is
already superseded here is refused; two supersessions made on two machines
are both kept and listed as a conflict. The title is the words given,
joined with spaces, or stdin for '-'; it is one line of at most 200
characters, and --decision and --rationale take at most 512 KiB each.

Example:
  nexus --agent lyra decide "Secrets live in the OS keychain" \
      --decision "Use the OS keychain for all tokens" \
      --rationale "Files in the vault sync to phones" --supersedes lyra@vps:D-0003`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runDecision(g, opts, args) },
	}
	f := cmd.Flags()
	f.StringVar(&opts.decision, "decision", "", "what was decided (required)")
	f.StringVar(&opts.rationale, "rationale", "", "why")
	f.StringVar(&opts.supersedes, "supersedes", "", "id of the decision this one replaces, e.g. lyra@vps:D-0003")
	return cmd
}

// runDecision records a decision; args are the title's words, or "-" for
// stdin.
func runDecision(g *globals, opts *decideOptions, args []string) error {
	var err error
	if opts.title, err = g.textArgs(args, "the title"); err != nil {
		return err
	}
	agent, err := g.agentName()
	if err != nil {
		return err
	}
	if strings.TrimSpace(opts.decision) == "" {
		return usagef("--decision is required")
	}
	l, err := g.openLog()
	if err != nil {
		return err
	}
	rec, err := l.Record(agent, livelog.Decision{
		Title:      opts.title,
		Decision:   opts.decision,
		Rationale:  opts.rationale,
		Supersedes: opts.supersedes,
	})
	if err != nil {
		return err
	}
	return g.emit(rec, nil, func(w io.Writer) {
		fmt.Fprintf(w, "Recorded %s: %s\n", rec.ID, rec.Title)
		if rec.Supersedes != "" {
			fmt.Fprintf(w, "  supersedes %s\n", rec.Supersedes)
		}
		if rec.Quarantine != "" {
			fmt.Fprintf(w, "  note: quarantined (%s): other agents see only a [QUARANTINED] line until a person clears it\n", rec.Quarantine)
		}
	})
}

// decisionsOptions are the flags of 'nexus decisions'.
type decisionsOptions struct {
	all bool
	raw bool
}

func newDecisionsCmd(g *globals) *cobra.Command {
	opts := &decisionsOptions{}
	cmd := &cobra.Command{
		Use:   "decisions",
		Short: "List the current decisions (superseded ones with --all)",
		Long: `List the decisions of every decision feed (log/decisions/, and an older
vault's log/decisions.md), oldest first. Decisions superseded by a later
one are hidden unless --all is given; then they are marked. Two decisions
that supersede the same one are both shown, marked as a conflict for a
person (or a later decision) to resolve. A quarantined decision shows as
[QUARANTINED: rule] unless --raw. 'nexus log verify' checks signatures.

Example:
  nexus decisions --all --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runDecisions(g, opts) },
	}
	cmd.Flags().BoolVar(&opts.all, "all", false, "include superseded decisions")
	cmd.Flags().BoolVar(&opts.raw, "raw", false, "show the text of quarantined decisions")
	return cmd
}

func runDecisions(g *globals, opts *decisionsOptions) error {
	l, err := g.openLog()
	if err != nil {
		return err
	}
	ds, err := l.ListDecisions(opts.all)
	if err != nil {
		return err
	}
	if !opts.raw {
		for i := range ds {
			if ds[i].Quarantine != "" {
				ds[i].Title, ds[i].Decision, ds[i].Rationale = "[QUARANTINED: "+ds[i].Quarantine+"] (see "+ds[i].File+", nexus decisions --raw)", "", ""
			}
		}
	}
	return g.emit(listOf("decisions", ds), nil, func(w io.Writer) {
		if len(ds) == 0 {
			fmt.Fprintln(w, "No decisions recorded.")
		}
		for _, d := range ds {
			mark := ""
			if d.SupersededBy != "" {
				mark = " (superseded by " + d.SupersededBy + ")"
			}
			if !d.Signed {
				mark += " (unsigned)"
			}
			if len(d.Conflict) > 0 {
				mark += " (CONFLICT: also superseding the same decision: " + strings.Join(d.Conflict, ", ") + ")"
			}
			if d.Quarantine != "" && !opts.raw {
				fmt.Fprintf(w, "%s [QUARANTINED: %s] (see %s, nexus decisions --raw)%s\n", d.ID, d.Quarantine, d.File, mark)
				continue
			}
			fmt.Fprintf(w, "%s %s%s\n    %s, %s\n    Decision: %s\n", d.ID, d.Title, mark, d.Agent, d.Time.Format(time.RFC3339), indentMore(d.Decision))
			if d.Rationale != "" {
				fmt.Fprintf(w, "    Rationale: %s\n", indentMore(d.Rationale))
			}
			if d.Supersedes != "" {
				fmt.Fprintf(w, "    Supersedes: %s\n", d.Supersedes)
			}
		}
	})
}

func indentMore(s string) string { return strings.ReplaceAll(s, "\n", "\n      ") }
