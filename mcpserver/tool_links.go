package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/nexus-memory/nexus/links"
)

// maxLinks bounds each list of one memory_links result.
const maxLinks = 1000

// linksResult is memory_links's result.
type linksResult struct {
	// Note is the vault path of the note the links are of.
	Note string `json:"note"`
	// Outgoing are the note's links in the order written; an unresolved
	// one has path "".
	Outgoing []links.Link `json:"outgoing"`
	// Backlinks are the links to the note from other notes and canvases,
	// by file then line.
	Backlinks []links.Link `json:"backlinks"`
	// OutgoingTotal and BacklinksTotal count every link, also those past
	// limit.
	OutgoingTotal  int `json:"outgoing_total"`
	BacklinksTotal int `json:"backlinks_total"`
}

func (s *Server) linksTool() tool {
	return tool{
		def: newTool("memory_links", `A note's outgoing links and its backlinks (the notes and canvases linking to it), each with its file and line, resolved as Obsidian resolves them.

Links are [[Note]], [[Note|shown]], [[Note#Heading]], [[Note#^block]], embeds ![[file]], markdown links [x](Note%20name.md), links in frontmatter properties and a canvas's file nodes. A bare name resolves to the file of that name anywhere in the vault (case-insensitive; the one in the linking note's folder first, else the shortest path); a link to no file has path "".
Pass note as a vault path (projects/atlas.md, ".md" optional) or a name as a link writes it ("Ada Lovelace").
Returns {note, outgoing[], backlinks[], outgoing_total, backlinks_total}; each link has from, line, target, sub, shown, embed, property, text (its line) and path. Read a linked note with memory_get.`,
			objectSchema(fields{
				{"note", strLen("The note: a vault path or a name as a link writes it.", 1, 4096)},
				{"limit", intRange("The most links returned in each list, 1-1000 (default 200).", 1, maxLinks)},
			}, "note"),
			hints{title: "Links of a vault note", readOnly: true, idempotent: true}),
		run: s.memoryLinks,
	}
}

func (s *Server) memoryLinks(ctx context.Context, c *call) (any, error) {
	note := c.str("note", true)
	limit := c.integer("limit", 200, 1, maxLinks)
	if c.err != nil {
		return nil, c.err
	}
	res, err := links.Find(s.vault().Root(), note)
	if errors.Is(err, links.ErrNoNote) {
		return nil, fmt.Errorf("no file in the vault is named %q: pass its vault path (as memory_search returns it) or its name as a link writes it", note)
	}
	if err != nil {
		return nil, err
	}
	out := linksResult{Note: res.Note, Outgoing: res.Outgoing, Backlinks: res.Backlinks,
		OutgoingTotal: len(res.Outgoing), BacklinksTotal: len(res.Backlinks)}
	if len(out.Outgoing) > limit {
		out.Outgoing = out.Outgoing[:limit]
	}
	if len(out.Backlinks) > limit {
		out.Backlinks = out.Backlinks[:limit]
	}
	return out, nil
}
