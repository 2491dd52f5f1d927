package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/links"
)

func init() { register("links", newLinksCmd) }

func newLinksCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "links NOTE",
		Short: "A note's outgoing links and backlinks, with the line of each",
		Long: `Show the links a note makes and the links to it from other notes and canvases
(backlinks, Obsidian's "linked mentions"), each with its file and line,
resolved as Obsidian resolves them:

  [[Note]] [[Note|shown text]] [[Note#Heading]] [[Note#^block]] ![[embed]]
  [text](Other%20note.md)   links in frontmatter properties (author: "[[Ada]]")
  the file nodes and the text of a .canvas

A target names a vault path (".md" optional) or a file name anywhere in the
vault, compared case-insensitively after Unicode NFC normalisation; of
several files of that name, the one in the linking note's folder wins, else
the shortest path. Images, PDFs and other files are targets too. A link to
no existing file is listed as unresolved. Links in code and %%comments%%
are not links.

NOTE is a path (vault-relative or on disk, ".md" optional) or a note's name
as a link would write it. The answer comes from a links cache kept in
.nexus/index/links: each run lists the vault's files and reads only the notes
changed since the last run and those whose links can name NOTE (about 0.2 s
of CPU for 10,000 notes on a busy machine; the first run reads every note,
about 0.6 s).`,
		Example: `  nexus links "Ada Lovelace"
  nexus links projects/engine.md --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g.ran = true
			return runLinks(g, args[0])
		},
	}
}

func runLinks(g *globals, note string) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	// A path as the shell completed it, relative to the working folder.
	if _, serr := os.Stat(note); serr == nil && !filepath.IsAbs(note) {
		if abs, aerr := filepath.Abs(note); aerr == nil {
			if rel, rerr := filepath.Rel(v.Root(), abs); rerr == nil && filepath.IsLocal(rel) {
				note = filepath.ToSlash(rel)
			}
		}
	}
	res, err := links.Find(v.Root(), note)
	if errors.Is(err, links.ErrNoNote) {
		return fmt.Errorf("no file in the vault is named %q: give its path or its name as a link would write it", note)
	}
	if err != nil {
		return err
	}
	return g.emit(res, nil, func(w io.Writer) { writeLinks(w, res) })
}

func writeLinks(w io.Writer, res *links.Result) {
	fmt.Fprintf(w, "%s\n\nOutgoing links (%d):\n", res.Note, len(res.Outgoing))
	if len(res.Outgoing) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, l := range res.Outgoing {
		to := l.Path
		if to == "" {
			to = l.Target + " (unresolved)"
		}
		if l.Sub != "" {
			to += " > " + l.Sub
		}
		fmt.Fprintf(w, "  %d: %s\n", l.Line, to)
	}
	fmt.Fprintf(w, "\nBacklinks (%d):\n", len(res.Backlinks))
	if len(res.Backlinks) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, l := range res.Backlinks {
		fmt.Fprintf(w, "  %s:%d: %s\n", l.From, l.Line, l.Text)
	}
}
