package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/vault"
)

func init() { register("fact", newFactCmd) }

// factWriteOptions are the flags of 'nexus fact write'.
type factWriteOptions struct {
	agents.FactInput
}

func newFactCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fact",
		Short: "Write, read, list and remove an agent's durable facts",
		Long: `Facts are an agent's durable knowledge, one markdown file per fact in
agents/AGENT/memory/SLUG.md, listed one line each in memory/INDEX.md (which
the session-start render always includes). Every fact command first brings
INDEX.md in step with fact files a person created, edited, renamed or
deleted in Obsidian. Limits: name 120 and description 300 characters (any
script counts one per character), body 32 KiB; INDEX.md holds at most
memory_index_line_limit lines (config, default 200).

Examples:
  nexus --agent lyra fact write --name "Deploy rule" --type feedback \
      --description "Staging first, always" "Deploy to staging, wait for the canary, then prod."
  nexus --agent lyra fact list
  nexus --agent lyra fact read deploy-rule`,
	}
	var o factWriteOptions
	write := &cobra.Command{
		Use:   "write --name NAME --type TYPE --description TEXT [--source S] [--update] [BODY... | -]",
		Short: "Create a fact file (or replace one with --update)",
		Long: `Create agents/AGENT/memory/SLUG.md with frontmatter name, description,
type, created, updated and source, and the body (the arguments joined with
spaces, or stdin if it is '-' or missing; at most 32 KiB). The slug comes from the name: lower case, letters and
digits of any script kept, other runs turned into '-' ("배포 규칙" becomes
"배포-규칙"); another fact with the same slug gets -2, -3...

A fact with the same name (ignoring case) is refused unless --update is
given, which replaces its description, type, source and body and keeps its
created time and any keys a person added. Text is scanned like memory
entries (injection, secrets, invisible Unicode). A new fact beyond the index
limit (memory_index_line_limit, default 200) is refused: merge or archive.

Types: user, feedback, project, reference.

Example:
  nexus --agent lyra fact write --name "Staging SSH" --type project \
    --description "staging host needs port 2222" "Staging (10.0.1.50) listens on 2222."`,
		RunE: func(cmd *cobra.Command, args []string) error { return runFactWrite(g, o, args) },
	}
	f := write.Flags()
	f.StringVar(&o.Name, "name", "", "the fact's name (one line); the file name is made from it")
	f.StringVar(&o.Description, "description", "", "one line shown in the memory index")
	f.StringVar(&o.Type, "type", "", "user, feedback, project or reference")
	f.StringVar(&o.Source, "source", "", "where the fact came from (a session, a log entry...)")
	f.BoolVar(&o.Update, "update", false, "replace the fact of the same name if it exists")
	for _, name := range []string{"name", "description", "type"} {
		write.MarkFlagRequired(name)
	}

	read := &cobra.Command{
		Use:   "read SLUG|NAME",
		Short: "Print one fact with its frontmatter fields",
		Long: `Print a fact of the agent, by slug (its file name without .md) or by name.

Example:
  nexus --agent lyra fact read staging-ssh`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runFactRead(g, args[0]) },
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the agent's facts in index order",
		Long: `List the agent's facts: slug, type, name and description, in the order of
memory/INDEX.md.

Example:
  nexus --agent lyra fact list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runFactList(g) },
	}
	remove := &cobra.Command{
		Use:   "remove SLUG|NAME",
		Short: "Archive a fact (it moves to review/archive/facts/; nothing is destroyed)",
		Long: `Move a fact file, byte for byte, to review/archive/facts/AGENT/SLUG.TIME.md
and drop it from memory/INDEX.md. Nothing is destroyed: move it back to
restore it.

Example:
  nexus --agent lyra fact remove staging-ssh`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runFactRemove(g, args[0]) },
	}
	cmd.AddCommand(write, read, list, remove)
	cmd.AddCommand(newFactPinCmds(g)...) // pin, unpin, stats: cmd_curator.go
	return cmd
}

// runFactRead prints one fact and records the read as a recall signal.
func runFactRead(g *globals, slug string) error {
	v, agent, err := factSetup(g)
	if err != nil {
		return err
	}
	fact, err := agents.ReadFact(v, agent, slug)
	if err != nil {
		return err
	}
	agents.RecordRead(v, agent, fact.Path, "cli", nil, 0, 0) // a recall signal (docs/curation.md)
	agents.FlushRecall()
	fact = agents.ShownFact(fact) // agents run it too: scanned as it is shown (docs/scan.md)
	return g.emit(fact, nil, func(w io.Writer) {
		fmt.Fprintf(w, "%s (%s)\n%s\ntype: %s  created: %s  updated: %s\n", fact.Name, fact.Path, fact.Description,
			fact.Type, fmtDate(fact.Created), fmtDate(fact.Updated))
		if fact.Source != "" {
			fmt.Fprintf(w, "source: %s\n", fact.Source)
		}
		fmt.Fprintf(w, "\n%s\n", fact.Body)
	})
}

// runFactList prints the agent's facts in index order.
func runFactList(g *globals) error {
	v, agent, err := factSetup(g)
	if err != nil {
		return err
	}
	facts, err := agents.ListFacts(v, agent)
	if err != nil {
		return err
	}
	facts = nonNil(facts)
	for i := range facts {
		facts[i] = agents.ShownFact(facts[i])
	}
	return g.emit(listOf("facts", facts), nil, func(w io.Writer) {
		if len(facts) == 0 {
			fmt.Fprintf(w, "%s has no facts.\n", agent)
			return
		}
		var tb table
		tb.row("SLUG", "TYPE", "NAME", "DESCRIPTION")
		for _, f := range facts {
			tb.row(f.Slug, string(f.Type), f.Name, f.Description)
		}
		tb.write(w)
		fmt.Fprintf(w, "%s; index limit %d lines\n", plural(len(facts), "fact", "facts"), v.Config().MemoryIndexLineLimit)
	})
}

// runFactRemove archives a fact (by slug or name).
func runFactRemove(g *globals, slug string) error {
	v, agent, err := factSetup(g)
	if err != nil {
		return err
	}
	archived, err := agents.RemoveFact(v, agent, slug, g.now())
	if err != nil {
		return err
	}
	res := struct {
		Agent    string `json:"agent"`
		Removed  string `json:"removed"`
		Archived string `json:"archived"`
	}{agent, slug, archived}
	return g.emit(res, nil, func(w io.Writer) {
		fmt.Fprintf(w, "Archived %s to %s\n", slug, archived)
	})
}

// factSetup opens the vault, names the agent, and brings its memory index
// in step with the files (a full index is reported, not fatal).
func factSetup(g *globals) (*vault.Vault, string, error) {
	agent, err := g.agentName()
	if err != nil {
		return nil, "", err
	}
	v, err := g.openVault()
	if err != nil {
		return nil, "", err
	}
	if err := agents.SyncIndex(v, agent); err != nil {
		switch {
		case vault.IsReadOnly(err):
			// Another user's vault, a read-only disk: reading works;
			// a write will say why it cannot.
			fmt.Fprintf(g.stderr, "nexus: note: %v\n", err)
		case !errors.Is(err, agents.ErrIndexFull):
			return nil, "", err
		default:
			fmt.Fprintf(g.stderr, "nexus: warning: %v\n", err)
		}
	}
	return v, agent, nil
}

// runFactWrite creates (or with --update replaces) a fact; args are the
// body's words, or "-" or nothing for stdin.
func runFactWrite(g *globals, o factWriteOptions, args []string) error {
	if len(args) == 0 {
		args = []string{"-"}
	}
	body, err := g.textArgs(args, "the body")
	if err != nil {
		return err
	}
	o.Body = body
	v, agent, err := factSetup(g)
	if err != nil {
		return err
	}
	fact, err := agents.WriteFact(v, agent, o.FactInput, g.now())
	if err != nil {
		return err
	}
	fact.Body = ""
	return g.emit(fact, nil, func(w io.Writer) {
		verb := "Wrote"
		if !fact.Created.Equal(fact.Updated) {
			verb = "Updated"
		}
		fmt.Fprintf(w, "%s %s\n  %s\n", verb, fact.Path, strings.TrimPrefix(agents.IndexLine(fact.Slug, fact.Name, fact.Description), "- "))
	})
}

// fmtDate prints a time as "2006-01-02 15:04 UTC", or "-" when unknown.
func fmtDate(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}
