package mcpserver

import (
	"context"
	"strings"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
)

func (s *Server) factTools() []tool {
	return []tool{
		{
			def: newTool("fact_write", `Save one durable fact as its own file (agents/YOU/memory/SLUG.md) and list it in your memory index, which is loaded at every session start.

Use it for things worth keeping beyond this session that do not fit the small MEMORY.md: a user preference, feedback you were given, project context, a pointer to a reference. One fact per call; keep the body short.
A fact with the same name is refused unless update is true (then it is replaced, keeping its created time). The text is scanned: injection phrasing, secrets and invisible characters are refused with the rule's name — rewrite the text without them. When the index is full, remove stale facts with fact_remove first.`,
				objectSchema(fields{
					{"name", strLen("Short title of the fact; also its file name (slug).", 1, agents.MaxFactNameRunes)},
					{"description", strLen("One line saying what the fact is about; shown in the memory index.", 1, agents.MaxFactDescriptionRunes)},
					{"type", enumProp("Kind of fact.", agents.FactTypes()...)},
					{"body", strLen("The fact itself, in markdown. Short (at most 32 KiB).", 1, agents.MaxFactBodyBytes)},
					{"source", strLen("Optional: where it came from (session, log entry, review id).", 0, agents.MaxFactSourceRunes)},
					{"update", boolProp("Replace an existing fact of the same name (default false).")},
				}, "name", "description", "type", "body"),
				// update true overwrites the fact of the same name.
				hints{title: "Write a fact", destructive: true}),
			run: s.factWrite,
		},
		{
			def: newTool("fact_read", `Read a fact file by slug or name, or list facts when no slug is given.

Your memory index (in session_start) lists your facts as [[SLUG|name]]; pass the SLUG. Pass agent to read another agent's facts (reading only).
Returns the fact {slug, name, description, type, created, updated, source, body, path}, or {facts: [...]} when listing.`,
				objectSchema(fields{
					{"slug", strLen("The fact's slug (file name without .md) or its name. Omit to list all facts.", 0, agents.MaxFactNameRunes)},
					{"agent", strLen("Whose facts to read (default: yours).", 0, maxAgentName)},
				}),
				hints{title: "Read a fact", readOnly: true, idempotent: true}),
			run: s.factRead,
		},
		{
			def: newTool("fact_remove", `Remove one of your facts: the file is moved to review/archive/ (nothing is destroyed) and leaves your memory index.

Use it when a fact is wrong or stale, or to make room when the index is full. Returns {removed, archived}.`,
				objectSchema(fields{
					{"slug", strLen("The fact's slug (or name).", 1, agents.MaxFactNameRunes)},
				}, "slug"),
				hints{title: "Remove a fact", destructive: true}),
			run: s.factRemove,
		},
	}
}

func (s *Server) factWrite(ctx context.Context, c *call) (any, error) {
	in := agents.FactInput{
		Name:        c.str("name", true),
		Description: c.str("description", true),
		Type:        strings.TrimSpace(c.str("type", true)),
		Body:        c.str("body", true),
		Source:      c.str("source", false),
		Update:      c.boolean("update", false),
	}
	if c.err != nil {
		return nil, c.err
	}
	return agents.WriteFact(s.vault(), c.agent, in, s.now())
}

type factList struct {
	Agent string        `json:"agent"`
	Facts []agents.Fact `json:"facts"`
}

func (s *Server) factRead(ctx context.Context, c *call) (any, error) {
	slug := c.str("slug", false)
	owner := strings.TrimSpace(c.str("agent", false))
	if c.err != nil {
		return nil, c.err
	}
	if owner == "" {
		owner = c.agent
	}
	if err := identity.ValidName(owner); err != nil {
		return nil, err
	}
	if strings.TrimSpace(slug) == "" {
		facts, err := agents.ListFacts(s.vault(), owner)
		if facts == nil {
			facts = []agents.Fact{}
		}
		for i := range facts {
			facts[i] = shownFact(facts[i])
		}
		return factList{Agent: owner, Facts: facts}, err
	}
	f, err := agents.ReadFact(s.vault(), owner, slug)
	if err == nil {
		agents.RecordRead(s.vault(), c.agent, f.Path, "mcp", nil, 0, 0) // a recall signal (docs/curation.md)
	}
	return shownFact(f), err
}

type factRemoved struct {
	Removed  string `json:"removed"`
	Archived string `json:"archived"`
}

func (s *Server) factRemove(ctx context.Context, c *call) (any, error) {
	slug := c.str("slug", true)
	if c.err != nil {
		return nil, c.err
	}
	archived, err := agents.RemoveFact(s.vault(), c.agent, slug, s.now())
	if err != nil {
		return nil, err
	}
	return factRemoved{Removed: slug, Archived: archived}, nil
}
