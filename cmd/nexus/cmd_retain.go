package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/retention"
)

func init() { register("retain", newRetainCmd) }

type retainOptions struct {
	in      agents.FactInput
	session string
}

func newRetainCmd(g *globals) *cobra.Command {
	var o retainOptions
	cmd := &cobra.Command{
		Use:   "retain --type TYPE [--name N] [--description D] [--source S] [--session S] TEXT... | -",
		Short: "Propose a fact for a person's review (review/pending/ID.md)",
		Long: `File a fact the agent wants to keep as review/pending/ID.md, with
provenance (agent, session, time, source) and status: pending. It becomes a
fact file only when a person approves it ('nexus review approve ID', or
status: approved in Obsidian). The text is checked and scanned exactly as a
direct fact write would be; refused text is not filed.

Without --name the name is the text's first line (cut to 60 characters);
without --description the description is the first line too. TEXT '-' (or
none) reads stdin; several words are joined with spaces. Limits, as for a
fact: name 120 and description 300 characters, text 32 KiB. The session is
--session, else $NEXUS_SESSION.

Example:
  nexus --agent lyra retain --type feedback "User wants PR descriptions in Korean" \
    --source "log:2026-11-29T02:11Z"`,
		RunE: func(cmd *cobra.Command, args []string) error { return runRetain(g, o, args) },
	}
	f := cmd.Flags()
	f.StringVar(&o.in.Type, "type", "", "user, feedback, project or reference")
	f.StringVar(&o.in.Name, "name", "", "the fact's name (default: the text's first line)")
	f.StringVar(&o.in.Description, "description", "", "one line for the memory index (default: the text's first line)")
	f.StringVar(&o.in.Source, "source", "", "where it came from (a log entry, a message...)")
	f.StringVar(&o.session, "session", "", "the session that proposes it (default $NEXUS_SESSION)")
	f.BoolVar(&o.in.Update, "update", false, "on approval, replace the fact of the same name if it exists")
	cmd.MarkFlagRequired("type")
	return cmd
}

func runRetain(g *globals, o retainOptions, args []string) error {
	if len(args) == 0 {
		args = []string{"-"}
	}
	text, err := g.textArgs(args, "the text")
	if err != nil {
		return err
	}
	o.in.Body = text
	agent, err := g.agentName()
	if err != nil {
		return err
	}
	v, err := g.openVault()
	if err != nil {
		return err
	}
	first := firstTextLine(o.in.Body)
	if strings.TrimSpace(o.in.Name) == "" {
		o.in.Name = cutWords(first, 60)
	}
	if strings.TrimSpace(o.in.Description) == "" {
		o.in.Description = cutWords(first, agents.MaxFactDescriptionRunes)
	}
	if o.session == "" {
		o.session = os.Getenv("NEXUS_SESSION")
	}
	prov := retention.Provenance{Session: o.session, Source: o.in.Source}
	o.in.Source = ""
	it, err := retention.Retain(v, agent, o.in, prov, g.now())
	if err != nil {
		return err
	}
	return g.emit(it, nil, func(w io.Writer) {
		fmt.Fprintf(w, "Filed %s for review: %s\n  %s\nA person approves it with 'nexus review approve %s' (or status: approved in Obsidian).\n",
			it.ID, it.Summary(), it.Path, it.ID)
	})
}

// firstTextLine returns the first non-blank line of s, trimmed.
func firstTextLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#")); l != "" {
			return l
		}
	}
	return ""
}

// cutWords shortens s to at most n code points, at a word boundary when
// there is one, marking the cut with "…".
func cutWords(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	cut := string(r)
	if i := strings.LastIndexAny(cut, " \t"); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimSpace(cut) + "…"
}
