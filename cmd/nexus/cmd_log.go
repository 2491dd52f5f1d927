package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/livelog"
)

func init() { register(newLogCmd) }

func newLogCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Append to, read, follow and verify the signed live-context log",
		Long: `The live log (log/live/YYYY-MM.md) is the shared, append-only memory every
agent reads before it replies and appends to after each meaningful turn.
Each entry is signed with its agent's key and chained to the one before,
so 'nexus log verify' can tell what was edited, removed or reordered.
See docs/livelog.md for the entry format (a person may append by hand).

Examples:
  nexus --agent lyra log append --channel deploy --kind shipped "Fixed the login timeout"
  nexus --agent ella log read --unread --ack
  nexus log tail -f
  nexus log verify`,
	}
	cmd.AddCommand(newLogAppendCmd(g), newLogReadCmd(g), newLogTailCmd(g), newLogVerifyCmd(g))
	return cmd
}

func (g *globals) openLog() (*livelog.Log, error) {
	v, err := g.openVault()
	if err != nil {
		return nil, err
	}
	return livelog.Open(v, livelog.Options{Now: g.now})
}

func newLogAppendCmd(g *globals) *cobra.Command {
	var channel, kind, body, bodyFile string
	cmd := &cobra.Command{
		Use:   "append SUMMARY...",
		Short: "Append a signed entry as --agent",
		Long: `Append one entry, signed with the agent's key, to this month's segment.
It is on disk (fsynced) before the command returns.

The summary is one line: newlines in it are folded into spaces (the result
says so in "notes"). At most 500 characters. The body is markdown, at most
1 MiB; lines that would read as an entry header or a Nexus comment are
escaped with a backslash so a body can never forge an entry.

Example:
  nexus --agent lyra log append --channel deploy --kind shipped \
      "Fixed login timeout; PR #123 merged" --body "Root cause: ..."`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			agent, err := g.agentName()
			if err != nil {
				return err
			}
			if bodyFile != "" {
				if body != "" {
					return usagef("give --body or --body-file, not both")
				}
				var data []byte
				if bodyFile == "-" {
					data, err = io.ReadAll(io.LimitReader(g.stdin, livelog.MaxBodyBytes+1))
				} else {
					data, err = os.ReadFile(bodyFile)
				}
				if err != nil {
					return fmt.Errorf("read body: %w", err)
				}
				body = string(data)
			}
			l, err := g.openLog()
			if err != nil {
				return err
			}
			res, err := l.AppendDetailed(agent, livelog.Entry{Channel: channel, Kind: kind, Summary: strings.Join(args, " "), Body: body})
			if err != nil {
				return err
			}
			return g.emit(res, nil, func(w io.Writer) {
				e := res.Entry
				fmt.Fprintf(w, "Appended to %s: %s %s [%s/%s] %s\n", e.Segment, e.Time.Format(time.RFC3339), e.Agent, e.Channel, e.Kind, e.Summary)
				for _, n := range res.Notes {
					fmt.Fprintf(w, "  note: %s\n", n)
				}
				if res.SteppedOverTornTail {
					fmt.Fprintln(w, "  warning: the log ended in a record cut short by a crash; it is marked and reported by 'nexus log verify'")
				}
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&channel, "channel", livelog.DefaultChannel, "channel (letters, digits, '-', '_', '.')")
	f.StringVar(&kind, "kind", livelog.DefaultKind, "kind of entry, e.g. shipped, question, blocked")
	f.StringVar(&body, "body", "", "markdown body under the summary")
	f.StringVar(&bodyFile, "body-file", "", "read the body from a file ('-': stdin)")
	return cmd
}

type readResult struct {
	Reader  string          `json:"reader,omitempty"`
	Unread  bool            `json:"unread"`
	Acked   bool            `json:"acked"`
	Count   int             `json:"count"`
	Entries []livelog.Entry `json:"entries"`
}

func newLogReadCmd(g *globals) *cobra.Command {
	var (
		unread, ack         bool
		last                int
		from, channel, kind string
		since               string
	)
	cmd := &cobra.Command{
		Use:   "read",
		Short: "Read entries: what is new for --agent, or the last N with filters",
		Long: `With --unread, print the entries after --agent's read cursor, oldest first
(other agents' entries and hand-typed text; an agent's own entries are never
unread for it). --ack then moves the cursor past them.

Without --unread, print the last --last entries (default 20, 0 for all),
filtered by author (--from), --channel, --kind and --since (a date
2026-11-01, a UTC time 2026-11-01T10:30, or RFC 3339). Without --unread no reader is needed, so
the global --agent also works as the author filter, as in
'nexus log read --last 20 --agent lyra'; --from wins if both are given.

Hand-typed text (unsigned) is shown in unfiltered reads.

Examples:
  nexus --agent ella log read --unread --ack
  nexus log read --last 20 --from lyra --channel deploy --since 2026-11-01`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if ack && !unread {
				return usagef("--ack needs --unread")
			}
			l, err := g.openLog()
			if err != nil {
				return err
			}
			res := readResult{Unread: unread, Entries: []livelog.Entry{}}
			if unread {
				if from != "" || channel != "" || kind != "" || since != "" || cmd.Flags().Changed("last") {
					return usagef("--unread takes no filters")
				}
				agent, err := g.agentName()
				if err != nil {
					return err
				}
				if _, err := identity.Load(l.Vault(), agent); errors.Is(err, identity.ErrNoAgent) {
					return err // a typo must not start a cursor for nobody
				}
				es, err := l.ReadUnread(agent, ack)
				if err != nil {
					return err
				}
				res.Reader, res.Acked, res.Entries = agent, ack && len(es) > 0, es
			} else {
				o := livelog.ReadOptions{Last: last, From: from, Channel: channel, Kind: kind}
				if o.From == "" {
					o.From = g.agent
				}
				if o.Since, err = parseDateFlag("--since", since, false); err != nil {
					return err
				}
				if last < 0 {
					return usagef("--last must be 0 or more")
				}
				es, err := l.Read(o)
				if err != nil {
					return err
				}
				res.Entries = es
			}
			if res.Entries == nil {
				res.Entries = []livelog.Entry{}
			}
			res.Count = len(res.Entries)
			return g.emit(res, nil, func(w io.Writer) {
				if len(res.Entries) == 0 {
					if unread {
						fmt.Fprintf(w, "Nothing new for %s.\n", res.Reader)
					} else {
						fmt.Fprintln(w, "No entries.")
					}
					return
				}
				for _, e := range res.Entries {
					printEntry(w, e)
				}
				if res.Acked {
					fmt.Fprintf(w, "(%d entries acknowledged for %s)\n", len(res.Entries), res.Reader)
				}
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&unread, "unread", false, "entries new for --agent since its cursor")
	f.BoolVar(&ack, "ack", false, "with --unread: move the cursor past what was printed")
	f.IntVar(&last, "last", 20, "how many of the newest matching entries (0: all)")
	f.StringVar(&from, "from", "", "only entries written by this agent")
	f.StringVar(&channel, "channel", "", "only this channel")
	f.StringVar(&kind, "kind", "", "only this kind")
	f.StringVar(&since, "since", "", "only entries at or after this date or time: "+dateHelp)
	return cmd
}

// printEntry prints an entry for people: the header line, then the body
// indented.
func printEntry(w io.Writer, e livelog.Entry) {
	switch {
	case e.Hand:
		fmt.Fprintf(w, "(unsigned text, %s:%d)\n", e.Segment, e.Line)
		for _, l := range strings.Split(e.Body, "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
		return
	case !e.Signed:
		fmt.Fprint(w, "(unsigned) ")
	}
	fmt.Fprintf(w, "%s %s [%s/%s] %s\n", e.Time.Format(time.RFC3339), e.Agent, e.Channel, e.Kind, e.Summary)
	if e.Body != "" {
		for _, l := range strings.Split(e.Body, "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
}

func newLogTailCmd(g *globals) *cobra.Command {
	var follow bool
	var n int
	cmd := &cobra.Command{
		Use:   "tail",
		Short: "Print the newest entries; with -f, keep printing new ones as they land",
		Long: `Print the last -n entries (default 10). With -f, keep running and print
each new entry as it is appended, until interrupted. With --json, one JSON
object per line.

Example:
  nexus log tail -f`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := g.openLog()
			if err != nil {
				return err
			}
			show := func(e livelog.Entry) error {
				if g.json {
					return writeJSONLine(g.stdout, e)
				}
				printEntry(g.stdout, e)
				return nil
			}
			if n > 0 {
				es, err := l.Read(livelog.ReadOptions{Last: n})
				if err != nil {
					return err
				}
				for _, e := range es {
					if err := show(e); err != nil {
						return err
					}
				}
			}
			if !follow {
				return nil
			}
			return l.Follow(g.ctx, show)
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new entries")
	cmd.Flags().IntVarP(&n, "lines", "n", 10, "how many of the newest entries to print first")
	return cmd
}

func newLogVerifyCmd(g *globals) *cobra.Command {
	var strict bool
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check every signature and chain link; exit 1 if anything is wrong",
		Long: `Check each entry of the live log and the decision log against its agent's
public key (in IDENTITY.md) and the chain of hashes, and name what is
wrong, entry by entry:

  edited      the signature does not verify: changed after signing
  forged      signed with another agent's key, or by an agent with no key
  reordered   its predecessor in the chain is elsewhere in the log
  removed     its predecessor is missing, or entries at the end were cut off
  truncated   a record cut short (a crash's torn tail, or a truncated file)
  unsigned    text a person typed in by hand

Exit 0 when the log is intact, 1 otherwise. Unsigned text and a torn
tail that a later append already stepped over (a crashed append that was
never acknowledged) are listed but allowed, unless --strict.

Example:
  nexus log verify --strict --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := g.openLog()
			if err != nil {
				return err
			}
			r, err := l.Verify(g.ctx)
			if err != nil {
				return err
			}
			ok := r.OK(strict)
			var verr error
			if !ok {
				verr = errors.New("log verification found problems")
			}
			res := struct {
				OK     bool `json:"ok"`
				Strict bool `json:"strict"`
				*livelog.Report
			}{ok, strict, r}
			return g.emit(res, verr, func(w io.Writer) {
				fmt.Fprintf(w, "%d signed entries in %d files: %d intact", r.Entries, len(r.Files), r.Counts[livelog.StatusIntact])
				for _, s := range []livelog.Status{livelog.StatusEdited, livelog.StatusForged, livelog.StatusReordered, livelog.StatusRemoved, livelog.StatusTruncated, livelog.StatusUnsigned} {
					if n := r.Counts[s]; n > 0 {
						fmt.Fprintf(w, ", %d %s", n, s)
					}
				}
				fmt.Fprintln(w)
				for _, f := range r.Findings {
					who := f.Agent
					if who == "" {
						who = "-"
					}
					fmt.Fprintf(w, "%s:%d: %s: %s %q — %s\n", f.File, f.Line, f.Status, who, f.Summary, f.Detail)
				}
				if ok {
					fmt.Fprintln(w, "OK")
				}
			})
		},
	}
	cmd.Flags().BoolVar(&strict, "strict", false, "treat unsigned hand-typed text and recovered torn tails as problems too")
	return cmd
}

func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
