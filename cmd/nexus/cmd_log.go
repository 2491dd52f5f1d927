package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/livelog"
)

func init() { register("log", newLogCmd) }

func newLogCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Append to, read, follow and verify the signed live-context log",
		Long: `The live log is the shared, append-only memory every agent reads before it
replies and appends to after each meaningful turn. Each writer (an agent on
one device, lyra@vps) appends only to its own feed,
log/live/YYYY-MM/WRITER.md, so sync tools never see two versions of one
file. Each entry is numbered in its feed, linked to the one before, cites
the heads of the other feeds, and is signed, so 'nexus log verify' can tell
what was edited, removed, reordered or forked. Reading merges all feeds in
one order. See docs/livelog.md for the entry format (a person may type
entries by hand).

Examples:
  nexus --agent lyra log append --channel deploy --kind shipped "Fixed the login timeout"
  nexus --agent ella log read --unread --ack
  nexus log tail -f
  nexus log verify`,
	}
	cmd.AddCommand(newLogAppendCmd(g), newLogReadCmd(g), newLogTailCmd(g), newLogVerifyCmd(g), newLogFeedsCmd(g), newLogClearCmd(g), newLogTimelineCmd(g), newLogTrustCmd(g))
	return cmd
}

func (g *globals) openLog() (*livelog.Log, error) {
	v, err := g.openVault()
	if err != nil {
		return nil, err
	}
	// A merge of IDENTITY.md that dropped this machine's device key would
	// make its entries fail verification: the key is put back first
	// (nothing is written when none was dropped).
	identity.RestoreKeysQuietly(v)
	return livelog.Open(v, livelog.Options{Now: g.now})
}

// logAppendOptions are the flags of 'nexus log append'.
type logAppendOptions struct {
	channel  string // --channel
	kind     string // --kind
	body     string // --body
	bodyFile string // --body-file
	key      string // --key
}

func newLogAppendCmd(g *globals) *cobra.Command {
	var o logAppendOptions
	cmd := &cobra.Command{
		Use:   "append SUMMARY... | -",
		Short: "Append a signed entry as --agent",
		Long: `Append one entry, signed with the agent's key on this machine, to its feed
log/live/YYYY-MM/AGENT@DEVICE.md (see 'nexus device'). It is on disk
(fsynced) before the command returns.

--key makes the append idempotent: if the agent's feed on this machine (this
month or the last) already holds an entry with the same key, nothing is
written and that entry is printed, with "duplicate": true. Give the same key
when retrying after a timeout. At most 128 characters; only its digest is
stored.

Text that reads as a prompt injection or role hijack is kept and marked
quarantined (others see "[QUARANTINED: rule]"); secrets and invisible
characters are refused (exit 1), and nothing is written.

The summary is the words given, joined with spaces, or stdin for '-'. It is
one line: newlines in it are folded into spaces (the result says so in
"notes"). At most 500 characters. The body is markdown, at most
1 MiB; lines that would read as an entry header or a Nexus comment are
escaped with a backslash so a body can never forge an entry.

Example:
  nexus --agent lyra log append --channel deploy --kind shipped \
      "Fixed login timeout; PR #123 merged" --body "Root cause: ..."`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runLogAppend(g, o, args) },
	}
	f := cmd.Flags()
	f.StringVar(&o.channel, "channel", livelog.DefaultChannel, "channel (letters, digits, '-', '_', '.')")
	f.StringVar(&o.kind, "kind", livelog.DefaultKind, "kind of entry, e.g. shipped, question, blocked")
	f.StringVar(&o.body, "body", "", "markdown body under the summary")
	f.StringVar(&o.bodyFile, "body-file", "", "read the body from a file ('-': stdin)")
	f.StringVar(&o.key, "key", "", "idempotency key: an append with a key the feed already holds writes nothing")
	return cmd
}

// runLogAppend appends one signed entry as --agent; args are the summary's
// words, or "-" for stdin.
func runLogAppend(g *globals, o logAppendOptions, args []string) error {
	agent, err := g.agentName()
	if err != nil {
		return err
	}
	if o.bodyFile == "-" && len(args) == 1 && args[0] == "-" {
		return usagef("stdin can give the summary (-) or the body (--body-file -), not both")
	}
	if o.bodyFile != "" {
		if o.body != "" {
			return usagef("give --body or --body-file, not both")
		}
		var data []byte
		if o.bodyFile == "-" {
			data, err = io.ReadAll(io.LimitReader(g.stdin, livelog.MaxBodyBytes+1))
		} else {
			data, err = os.ReadFile(o.bodyFile)
		}
		if err != nil {
			return fmt.Errorf("read body: %w", err)
		}
		o.body = string(data)
	}
	l, err := g.openLog()
	if err != nil {
		return err
	}
	if len(o.key) > livelog.MaxKeyLen {
		return usagef("--key is %d bytes; at most %d", len(o.key), livelog.MaxKeyLen)
	}
	summary, err := g.textArgs(args, "the summary")
	if err != nil {
		return err
	}
	res, err := l.AppendDetailed(agent, livelog.Entry{Channel: o.channel, Kind: o.kind, Summary: summary, Body: o.body, Key: o.key})
	if err != nil {
		return err
	}
	return g.emit(res, nil, func(w io.Writer) {
		e := res.Entry
		verb := "Appended to"
		if res.Duplicate {
			verb = "Already in (same --key, nothing written)"
		}
		fmt.Fprintf(w, "%s %s: %s %s [%s/%s] %s\n", verb, e.Segment, e.Time.Format(time.RFC3339), e.Agent, e.Channel, e.Kind, e.Summary)
		if e.Quarantine != "" {
			fmt.Fprintf(w, "  note: quarantined (%s): other agents see only a [QUARANTINED] line until a person clears it\n", e.Quarantine)
		}
		for _, n := range res.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
		if res.SteppedOverTornTail {
			fmt.Fprintln(w, "  warning: the feed ended in a record cut short by a crash; it is marked and reported by 'nexus log verify'")
		}
		if res.Gap != "" {
			fmt.Fprintf(w, "  warning: entries %s of this feed are missing (deleted?); the new entry records the gap, and 'nexus log verify' reports it\n", res.Gap)
		}
	})
}

type readResult struct {
	Reader  string          `json:"reader,omitempty"`
	From    string          `json:"from,omitempty"` // the author filter, from --from, --agent or $NEXUS_AGENT
	Unread  bool            `json:"unread"`
	Acked   bool            `json:"acked"`
	Count   int             `json:"count"`
	Entries []livelog.Entry `json:"entries"`
}

// logReadOptions are the flags of 'nexus log read'.
type logReadOptions struct {
	unread    bool   // --unread
	ack       bool   // --ack
	raw       bool   // --raw
	last      int    // -n, --last
	lastGiven bool   // --last was given
	from      string // --from
	channel   string // --channel
	kind      string // --kind
	since     string // --since
}

func newLogReadCmd(g *globals) *cobra.Command {
	var o logReadOptions
	cmd := &cobra.Command{
		Use:   "read",
		Short: "Read entries: what is new for --agent, or the last N with filters",
		Long: `With --unread, print every entry --agent has not acknowledged on this
machine, from every feed, oldest first in the log's one order: other agents'
entries, the same agent's entries from other devices, entries that arrived
late by sync, and hand-typed text (never the agent's own entries from this
machine). --ack then moves the cursor past them. An agent that never
acknowledged has read nothing; the output streams, so memory stays small.

Without --unread, print the last --last entries (default 20, 0 for all),
filtered by author (--from), --channel, --kind and --since (a date
2026-11-01 or an RFC 3339 time). Without --unread no reader is needed, so
the agent (--agent, else $NEXUS_AGENT) also works as the author filter, as
in 'nexus log read --last 20 --agent lyra'; --from wins if both are given.
A filter from $NEXUS_AGENT alone is noted on stderr.

Hand-typed text (unsigned) is shown in unfiltered reads. Quarantined
entries (text that read as a prompt injection) show as
"[QUARANTINED: rule]"; --raw shows their text (read it yourself before
clearing it with 'nexus log clear').

Examples:
  nexus --agent ella log read --unread --ack
  nexus log read --last 20 --from lyra --channel deploy --since 2026-11-01
  nexus log read --raw --last 5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.lastGiven = cmd.Flags().Changed("last")
			return runLogRead(g, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.unread, "unread", false, "entries new for --agent since its cursor")
	f.BoolVar(&o.ack, "ack", false, "with --unread: move the cursor past what was printed")
	f.BoolVar(&o.raw, "raw", false, "show the text of quarantined entries instead of [QUARANTINED: rule]")
	f.IntVarP(&o.last, "last", "n", 20, "how many of the newest matching entries (0: all)")
	f.StringVar(&o.from, "from", "", "only entries written by this agent")
	f.StringVar(&o.channel, "channel", "", "only this channel")
	f.StringVar(&o.kind, "kind", "", "only this kind")
	f.StringVar(&o.since, "since", "", "only entries at or after this time: "+dateHelp)
	return cmd
}

// runLogRead prints what is new for --agent (--unread) or the newest entries
// that match the filters.
func runLogRead(g *globals, o logReadOptions) error {
	if o.ack && !o.unread {
		return usagef("--ack needs --unread")
	}
	l, err := g.openLog()
	if err != nil {
		return err
	}
	show := func(e livelog.Entry) livelog.Entry {
		if o.raw {
			return e
		}
		return e.Masked()
	}
	if o.unread {
		if o.from != "" || o.channel != "" || o.kind != "" || o.since != "" || o.lastGiven {
			return usagef("--unread takes no filters")
		}
		agent, err := g.agentName()
		if err != nil {
			return err
		}
		if _, err := identity.Load(l.Vault(), agent); errors.Is(err, identity.ErrNoAgent) {
			return err // a typo must not start a cursor for nobody
		}
		return streamUnread(g, l, agent, o.ack, show)
	}
	res := readResult{Entries: []livelog.Entry{}}
	ro := livelog.ReadOptions{Last: o.last, From: o.from, Channel: o.channel, Kind: o.kind}
	fromEnv := false
	if ro.From == "" {
		// The agent is --agent, else $NEXUS_AGENT (SPEC §8): both
		// filter alike, and a filter that came from the environment
		// alone is said (on stderr), since nothing on the command line
		// shows it.
		ro.From = g.agent
		if ro.From == "" {
			ro.From = os.Getenv("NEXUS_AGENT")
			fromEnv = ro.From != ""
		}
	}
	if err := knownAgent(l.Vault(), ro.From); err != nil {
		return err // a typo must not read as "no entries"
	}
	if ro.Since, err = parseDateFlag("--since", o.since, false); err != nil {
		return err
	}
	if o.last < 0 {
		return usagef("--last must be 0 or more")
	}
	es, err := l.Read(ro)
	if err != nil {
		return err
	}
	for _, e := range es {
		res.Entries = append(res.Entries, show(e))
	}
	res.Count = len(res.Entries)
	res.From = ro.From
	if fromEnv && !g.json {
		fmt.Fprintf(g.stderr, "nexus: entries by %s only ($NEXUS_AGENT); --from NAME for another author, NEXUS_AGENT= for all\n", ro.From)
	}
	return g.emit(res, nil, func(w io.Writer) {
		if len(res.Entries) == 0 {
			if ro.From != "" {
				fmt.Fprintf(w, "No entries by %s.\n", ro.From)
				return
			}
			fmt.Fprintln(w, "No entries.")
			return
		}
		for _, e := range res.Entries {
			printEntry(w, e)
		}
	})
}

// streamUnread prints agent's unread entries as they are merged, so that
// an agent with no cursor on a big log needs little memory. With --json
// it writes one document of readResult's shape (entries first, the count,
// acked and success after them: a success document, docs/cli.md).
//
// Output goes through one buffer, flushed at the end (and when full): an
// agent with no cursor on a million-entry log otherwise paid two write
// system calls per entry.
func streamUnread(g *globals, l *livelog.Log, agent string, ack bool, show func(livelog.Entry) livelog.Entry) error {
	bw := bufio.NewWriterSize(g.stdout, 64<<10)
	err := streamUnreadTo(bw, g, l, agent, ack, show)
	if ferr := bw.Flush(); ferr != nil && err == nil {
		err = fmt.Errorf("write output: %w", ferr)
	}
	return err
}

func streamUnreadTo(w *bufio.Writer, g *globals, l *livelog.Log, agent string, ack bool, show func(livelog.Entry) livelog.Entry) error {
	n := 0
	var line []byte
	if g.json {
		fmt.Fprintf(w, "{\n  \"reader\": %q,\n  \"unread\": true,\n  \"entries\": [", agent)
	}
	count, err := l.EachUnread(agent, ack, func(e livelog.Entry) error {
		e = show(e)
		if g.json {
			data, err := json.MarshalIndent(e, "    ", "  ")
			if err != nil {
				return err
			}
			sep := ","
			if n == 0 {
				sep = ""
			}
			fmt.Fprintf(w, "%s\n    %s", sep, data)
		} else {
			line = appendEntry(line[:0], e)
			w.Write(line)
		}
		n++
		return nil
	})
	if g.json {
		if n > 0 {
			fmt.Fprint(w, "\n  ")
		}
		fmt.Fprintf(w, "],\n  \"count\": %d,\n  \"acked\": %v,\n  \"success\": %v", n, err == nil && ack && count > 0, err == nil)
		if err != nil {
			// Entries printed before the error are in the document too;
			// "success" comes last, as it is known last.
			msg, _ := json.Marshal(g.plainMessage(nil, err))
			fmt.Fprintf(w, ",\n  \"error\": %s,\n  \"exit_code\": %d", msg, g.exitCode(err))
		}
		fmt.Fprint(w, "\n}\n")
		if err != nil {
			return reportedError{err}
		}
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case n == 0:
		fmt.Fprintf(w, "Nothing new for %s.\n", agent)
	case ack:
		fmt.Fprintf(w, "(%s acknowledged for %s)\n", plural(n, "entry", "entries"), agent)
	}
	return nil
}

// printEntry prints an entry for people: the header line, then the body
// indented.
func printEntry(w io.Writer, e livelog.Entry) {
	w.Write(appendEntry(nil, e))
}

// appendEntry appends printEntry's text for e to b (without fmt: a reader
// with no cursor prints a million of them).
func appendEntry(b []byte, e livelog.Entry) []byte {
	switch {
	case e.Hand:
		b = append(b, "(unsigned text, "...)
		b = append(b, e.Segment...)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(e.Line), 10)
		b = append(b, ")\n"...)
		return appendIndented(b, e.Body)
	case !e.Signed:
		b = append(b, "(unsigned) "...)
	}
	b = e.Time.AppendFormat(b, time.RFC3339)
	b = append(b, ' ')
	b = append(b, e.Agent...)
	b = append(b, " ["...)
	b = append(b, e.Channel...)
	b = append(b, '/')
	b = append(b, e.Kind...)
	b = append(b, "] "...)
	b = append(b, e.Summary...)
	b = append(b, '\n')
	if e.Body == "" {
		return b
	}
	return appendIndented(b, e.Body)
}

// appendIndented appends each line of body indented by four spaces.
func appendIndented(b []byte, body string) []byte {
	for {
		line, rest, more := strings.Cut(body, "\n")
		b = append(b, "    "...)
		b = append(b, line...)
		b = append(b, '\n')
		if !more {
			return b
		}
		body = rest
	}
}

// logTailOptions are the flags of 'nexus log tail'.
type logTailOptions struct {
	follow bool // -f, --follow
	n      int  // -n, --lines, --last
}

func newLogTailCmd(g *globals) *cobra.Command {
	var o logTailOptions
	cmd := &cobra.Command{
		Use:   "tail",
		Short: "Print the newest entries; with -f, keep printing new ones as they land",
		Long: `Print the last -n entries (default 10; --last is the same flag, as in
'log read'). With -f, keep running and print each new entry as it is
appended, until interrupted.

With --json and no -f, one JSON document, shaped like 'log read --json'
({"count": N, "entries": [...]}). With -f and --json, one JSON object per
entry per line (JSON Lines), as they arrive: the one command whose --json
output is a stream, since it never ends (docs/cli.md).

Examples:
  nexus log tail -n 5
  nexus log tail -f
  nexus log tail -f --json | jq -r .summary`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runLogTail(g, o) },
	}
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "keep printing new entries")
	cmd.Flags().IntVarP(&o.n, "lines", "n", 10, "how many of the newest entries to print first")
	cmd.Flags().IntVar(&o.n, "last", 10, "same as -n")
	return cmd
}

// runLogTail prints the newest entries and, with -f, each new one as it
// lands.
func runLogTail(g *globals, o logTailOptions) error {
	if o.n < 0 {
		return usagef("-n must be 0 or more (got %d)", o.n)
	}
	l, err := g.openLog()
	if err != nil {
		return err
	}
	if g.json && !o.follow {
		es := []livelog.Entry{}
		if o.n > 0 {
			got, err := l.Read(livelog.ReadOptions{Last: o.n})
			if err != nil {
				return err
			}
			es = append(es, got...)
		}
		return g.emit(readResult{Count: len(es), Entries: es}, nil, nil)
	}
	show := func(e livelog.Entry) error {
		if g.json {
			return writeJSONLine(g.stdout, e)
		}
		printEntry(g.stdout, e)
		return nil
	}
	if o.n > 0 {
		es, err := l.Read(livelog.ReadOptions{Last: o.n})
		if err != nil {
			return err
		}
		for _, e := range es {
			if err := show(e); err != nil {
				return err
			}
		}
	}
	if !o.follow {
		return nil
	}
	return l.Follow(g.ctx, show)
}

// logVerifyOptions are the flags of 'nexus log verify'.
type logVerifyOptions struct {
	strict bool // --strict
}

func newLogVerifyCmd(g *globals) *cobra.Command {
	var o logVerifyOptions
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check every signature, sequence and link of every feed; exit 1 if anything is wrong",
		Long: `Check each entry of every feed of the live log and the decision log (and an
older vault's single-file log) against the key this machine pinned for its
writer (on first sight, from IDENTITY.md), its feed's numbering and links,
the entries it cites, and what this machine saw before, and name what is
wrong, entry by entry:

  intact        (counted) the signature verifies and the links hold
  edited        the signature does not verify: changed after signing
  forged        signed with another agent's key, by an agent or device
                with no key, or re-signed with a key that replaced the
                pinned one
  key changed   signed with a key IDENTITY.md lists, not the pinned one:
                accept it with 'nexus log trust WRITER' if you made it
  new writer    a new device of an agent this machine knows, with a key it
                never saw: 'nexus log trust WRITER' if it is yours
  reordered     out of its place: after a later entry, a copy, another feed's
  removed       a gap in a feed, a cut-off tail (this machine saw more), or
                a cited entry this machine saw that is gone
  forked        two entries of one writer with one number: one device name
                on two machines (both are kept); settled once one of them
                has a name of its own ('nexus device name'): then a note
  not here yet  a cited entry that has not arrived by sync yet
  truncated     a record cut short (a crash's torn tail, or a truncated file)
  unsigned      text a person typed in by hand

Exit 0 when the log is intact, 1 when it is not, 3 when it could not be
checked at all: a lock another process holds past lock_timeout (default
30s; the message names that process), a feed or IDENTITY.md it may not
read, an I/O error. Without write access to .nexus/state/ (another user's
vault) it still checks, against the witness as it was, and says so in a
note. Unsigned
text, entries not here yet and a torn tail that a later append already
stepped over (a crashed append that was never acknowledged) are listed but
allowed, unless --strict; so is a settled fork, with the other machine's
branch (docs/livelog.md).

Example:
  nexus log verify --strict --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runLogVerify(g, o) },
	}
	cmd.Flags().BoolVar(&o.strict, "strict", false, "treat unsigned hand-typed text and recovered torn tails as problems too")
	return cmd
}

// runLogVerify checks every feed and prints what is wrong, entry by entry; a
// log it could not check exits 3.
func runLogVerify(g *globals, o logVerifyOptions) error {
	l, err := g.openLog()
	if err != nil {
		return err
	}
	r, err := l.Verify(g.ctx)
	if err != nil {
		// Not "tampered" (exit 1): the check itself could not run.
		return couldNotCheck(fmt.Errorf("could not verify the log: %w", err))
	}
	ok := r.OK(o.strict)
	var verr error
	if !ok {
		verr = errors.New("log verification found problems")
	}
	res := struct {
		OK     bool `json:"ok"`
		Strict bool `json:"strict"`
		*livelog.Report
	}{ok, o.strict, r}
	return g.emit(res, verr, func(w io.Writer) {
		fmt.Fprintf(w, "%s in %s: %d intact", plural(r.Entries, "signed entry", "signed entries"), plural(len(r.Files), "file", "files"), r.Counts[livelog.StatusIntact])
		for _, s := range []livelog.Status{livelog.StatusEdited, livelog.StatusForged, livelog.StatusKeyChanged, livelog.StatusNewWriter, livelog.StatusReordered, livelog.StatusRemoved,
			livelog.StatusForked, livelog.StatusNotHereYet, livelog.StatusTruncated, livelog.StatusUnsigned} {
			if n := r.Counts[s]; n > 0 {
				fmt.Fprintf(w, ", %d %s", n, s)
			}
		}
		fmt.Fprintln(w)
		for _, n := range r.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
		for _, f := range r.Findings {
			fmt.Fprintln(w, verifyFindingLine(f))
		}
		if ok {
			fmt.Fprintln(w, "OK")
		}
	})
}

func newLogFeedsCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "feeds",
		Short: "List the feeds of the live log and the decision log",
		Long: `List every feed (one per writer, AGENT@DEVICE) of the live log and the
decision log: its files, how many entries it holds, its head (the newest
entry: number, time, hash), the highest entry this machine has seen of it
(its witness; more than the head means entries were removed here), and
which other feeds cite it, up to which entry. Reads every file once.

Example:
  nexus log feeds --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runLogFeeds(g) },
	}
}

// runLogFeeds lists the feeds of the live log and the decision log.
func runLogFeeds(g *globals) error {
	l, err := g.openLog()
	if err != nil {
		return err
	}
	fs, err := l.Feeds(g.ctx)
	if err != nil {
		return err
	}
	res := struct {
		Feeds []livelog.FeedInfo `json:"feeds"`
	}{fs}
	return g.emit(res, nil, func(w io.Writer) {
		if len(fs) == 0 {
			fmt.Fprintln(w, "No feeds yet.")
		}
		for _, f := range fs {
			fmt.Fprintf(w, "%s %s: %d entries, head #%d %s", f.Log, f.Writer, f.Entries, f.Head.Seq, f.Head.Time.Format(time.RFC3339))
			if f.Head.Hash != "" {
				fmt.Fprintf(w, " %s…", f.Head.Hash[:12])
			}
			fmt.Fprintln(w)
			fmt.Fprintf(w, "    seen here up to #%d", f.SeenHere)
			if f.SeenHere > f.Head.Seq {
				fmt.Fprint(w, " (more than is here now: run 'nexus log verify')")
			}
			fmt.Fprintln(w)
			if len(f.CitedBy) > 0 {
				var parts []string
				for _, c := range f.CitedBy {
					parts = append(parts, fmt.Sprintf("%s up to #%d", c.Writer, c.Seq))
				}
				fmt.Fprintf(w, "    cited by %s\n", strings.Join(parts, ", "))
			}
			fmt.Fprintf(w, "    files: %s\n", strings.Join(f.Files, ", "))
		}
	})
}

// logClearOptions are the flags of 'nexus log clear'.
type logClearOptions struct {
	by string // --by
}

func newLogClearCmd(g *globals) *cobra.Command {
	var o logClearOptions
	cmd := &cobra.Command{
		Use:   "clear HASH --by NAME",
		Short: "Clear a quarantined entry (a person's decision, never an agent's)",
		Long: `Mark a quarantined log entry or decision as cleared: agents then see its text
instead of "[QUARANTINED: rule]". Read it first with 'nexus log read --raw'
(its hash is in --json output). The clearing is recorded in
log/cleared/DEVICE.md (synced with the vault) with your name and the time.

This is a person's decision: it is refused when an agent is set (--agent or
$NEXUS_AGENT), and no MCP tool offers it.

Example:
  nexus log read --raw --json --last 5
  nexus log clear kqmVJk2lrmSuZWak3M2z0tdd9PBZktZ96emmD0MajYA --by jane`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runLogClear(g, o, args) },
	}
	cmd.Flags().StringVar(&o.by, "by", "", "your name (recorded with the clearing)")
	return cmd
}

// runLogClear clears a quarantined entry (args[0], its hash) in a person's
// name.
func runLogClear(g *globals, o logClearOptions, args []string) error {
	if g.agent != "" || os.Getenv("NEXUS_AGENT") != "" {
		return refusedf("'nexus log clear' is for a person, and this command runs as an agent (--agent or $NEXUS_AGENT is set)")
	}
	if o.by == "" {
		return usagef("--by NAME is required: who is clearing it")
	}
	l, err := g.openLog()
	if err != nil {
		return err
	}
	if err := l.Clear(args[0], o.by); err != nil {
		return err
	}
	res := struct {
		Cleared string `json:"cleared"`
		By      string `json:"by"`
	}{args[0], o.by}
	return g.emit(res, nil, func(w io.Writer) { fmt.Fprintf(w, "Cleared %s (by %s).\n", args[0], o.by) })
}

func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// verifyFindingLine is one finding of 'nexus log verify' for a person:
// FILE:LINE: STATUS: WRITER#SEQ "summary" — detail, leaving out what the
// finding does not know (a removed entry has no file, line or summary).
func verifyFindingLine(f livelog.Finding) string {
	var b strings.Builder
	if f.File != "" {
		b.WriteString(f.File)
		if f.Line > 0 {
			b.WriteString(":" + strconv.Itoa(f.Line))
		}
		b.WriteString(": ")
	}
	b.WriteString(string(f.Status))
	who := f.Agent
	if f.Writer != "" {
		who = f.Writer
		if f.Seq > 0 {
			who += "#" + strconv.FormatInt(f.Seq, 10)
		}
	}
	if who != "" {
		b.WriteString(": " + who)
	}
	if f.Summary != "" {
		fmt.Fprintf(&b, " %q", f.Summary)
	}
	if f.Detail != "" {
		b.WriteString(" — " + f.Detail)
	}
	return b.String()
}
