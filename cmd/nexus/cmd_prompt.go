package main

import (
	"errors"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/agents"
)

func init() { register("prompt", newPromptCmd) }

// promptEntry is an unread entry the prompt showed, as --json lists it:
// enough to name it, not its whole body.
type promptEntry struct {
	Time    time.Time `json:"time,omitzero"`
	Agent   string    `json:"agent,omitempty"`
	Channel string    `json:"channel,omitempty"`
	Kind    string    `json:"kind,omitempty"`
	Summary string    `json:"summary"`
	Hand    bool      `json:"hand,omitempty"`
	Signed  bool      `json:"signed"`
	Hash    string    `json:"hash,omitempty"`
	Segment string    `json:"segment"`
	// Quarantine is the rule a quarantined entry hit; its summary is
	// then the "[QUARANTINED: rule]" notice, as in the prompt text.
	Quarantine string `json:"quarantine,omitempty"`
}

// promptOptions are the flags of 'nexus prompt'.
type promptOptions struct {
	memoryOnly bool     // --memory-only
	ack        bool     // --ack
	only       []string // --only
	without    []string // --without
	maxEntries int      // --max-entries
	maxChar    int      // --max-chars
}

func newPromptCmd(g *globals) *cobra.Command {
	var o promptOptions
	cmd := &cobra.Command{
		Use:   "prompt",
		Short: "Print the agent's session-start render, whole or by section",
		Long: `Print what an agent is given at the start of a session: its identity
(IDENTITY.md without frontmatter), its MEMORY.md and USER.md blocks in the
exact Hermes Agent format, its memory index of fact files, then its unread
live-log entries, latest checkpoint and current decisions. Paste it into a
system prompt once per session; writes made during the session show in tool
results, not in this snapshot. It reads only: nothing is acknowledged,
unless --ack.

The sections, in order: identity, memory, user, memory_index, unread,
checkpoint, decisions. --only picks some, --without leaves some out (both
take a comma-separated list). A runtime that injects MEMORY.md and USER.md
itself (Hermes Agent) uses --without memory,user. --memory-only is
--only identity,memory,user,memory_index.

The unread section shows at most --max-entries entries (default: the
vault's prompt_log_entries, 20) in at most --max-chars characters (default
4000; at least one entry is always shown, each body cut to 300 characters),
and a line saying how many were left out. Without --ack it shows the newest
ones. With --ack it shows the oldest ones and then acknowledges exactly the
entries it showed: the rest stay unread and come first next time. This is
what runtime adapters call before every reply.

With --json: one field per section (a section left out has no field; an
empty one is ""), "prompt" (the sections joined), "sections" (the names
rendered), and with the unread section "unread_total", "unread_shown",
"unread_more", "acked" and "unread_entries" (the entries shown, without
their bodies; a quarantined one has "quarantine" set and its notice as the
summary).

Examples:
  nexus --agent lyra prompt
  nexus --agent lyra prompt --without memory,user
  nexus --agent lyra --json prompt --only unread --ack --max-entries 10`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runPrompt(g, o) },
	}
	f := cmd.Flags()
	f.BoolVar(&o.memoryOnly, "memory-only", false, "print only identity, MEMORY, USER and the memory index")
	f.StringSliceVar(&o.only, "only", nil, "render only these sections (comma-separated)")
	f.StringSliceVar(&o.without, "without", nil, "leave these sections out (comma-separated), e.g. memory,user")
	f.BoolVar(&o.ack, "ack", false, "show the oldest unread entries and acknowledge exactly those")
	f.IntVar(&o.maxEntries, "max-entries", 0, "at most this many unread entries (0: prompt_log_entries)")
	f.IntVar(&o.maxChar, "max-chars", 0, "at most this many characters of unread entries (0: 4000)")
	return cmd
}

// runPrompt prints the agent's session-start render, or the sections asked
// for.
func runPrompt(g *globals, o promptOptions) error {
	if o.memoryOnly {
		if len(o.only) > 0 || len(o.without) > 0 {
			return usagef("give --memory-only or --only/--without, not both")
		}
		o.only = agents.SnapshotSections()
	}
	if len(o.only) > 0 && len(o.without) > 0 {
		return usagef("give --only or --without, not both")
	}
	if o.maxEntries < 0 || o.maxChar < 0 {
		return usagef("--max-entries and --max-chars must be 0 (the default) or more")
	}
	o.only, o.without = splitList(o.only), splitList(o.without)
	agent, err := g.agentName()
	if err != nil {
		return err
	}
	opts := agents.PromptOptions{Only: o.only, Without: o.without, MaxEntries: o.maxEntries, MaxChars: o.maxChar, Ack: o.ack}
	if o.ack && !promptIncludes(opts, agents.SectionUnread) {
		return usagef("--ack acknowledges the unread entries shown, so the unread section must be rendered (see --only/--without)")
	}
	v, err := g.openVault()
	if err != nil {
		return err
	}
	p, err := agents.RenderPrompt(v, agent, opts)
	if errors.Is(err, agents.ErrSection) {
		return usagef("--only/--without: %v", err)
	}
	if err != nil {
		return err
	}
	agents.RecordSessionStart(v, agent, "cli") // a recall signal (docs/curation.md)
	agents.FlushRecall()
	text := p.Text()
	res := map[string]any{"agent": agent, "prompt": text}
	names := []string{}
	for _, s := range p.Sections {
		names = append(names, s.Name)
		res[s.Name] = s.Text
	}
	res["sections"] = names
	if u := p.Unread; u != nil {
		shown := make([]promptEntry, len(u.Entries))
		for i, e := range u.Entries {
			e = e.Masked() // never the text of a quarantined entry
			shown[i] = promptEntry{e.Time, e.Agent, e.Channel, e.Kind, e.Summary, e.Hand, e.Signed, e.Hash, e.Segment, e.Quarantine}
		}
		res["unread_total"], res["unread_shown"], res["unread_more"] = u.Total, len(u.Entries), u.More()
		res["acked"], res["unread_entries"] = u.Acked, shown
	}
	return g.emit(res, nil, func(w io.Writer) { io.WriteString(w, text) })
}

// splitList trims the names of a --only/--without list and drops empty ones.
func splitList(names []string) []string {
	var out []string
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// promptIncludes reports whether opts renders the named section.
func promptIncludes(opts agents.PromptOptions, name string) bool {
	if len(opts.Only) > 0 {
		return slices.Contains(opts.Only, name)
	}
	return !slices.Contains(opts.Without, name)
}
