package retention

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

// Kinds of journey event.
const (
	EventFactCreated  = "fact created"
	EventFactUpdated  = "fact updated"
	EventFactArchived = "fact archived"
	EventProposed     = "proposed"
	EventApproved     = "approved"
	EventRejected     = "rejected"
	EventDecision     = "decision"
	EventCuratorPass  = "curator pass"
)

// eventOrder orders events of the same instant (an approval at once
// creates its fact) as they follow from each other.
var eventOrder = map[string]int{
	EventProposed: 0, EventApproved: 1, EventRejected: 1, EventFactCreated: 2,
	EventFactUpdated: 3, EventFactArchived: 4, EventDecision: 5, EventCuratorPass: 6,
}

// Event is one moment in an agent's journey.
type Event struct {
	Time  time.Time `json:"time"`
	Agent string    `json:"agent"`
	Kind  string    `json:"kind"`
	Title string    `json:"title"`
	// Path is the vault-relative file the event happened to: for a fact,
	// where it lived then (agents/NAME/memory/SLUG.md).
	Path string `json:"path"`
	// Now is where that file is now, when it has moved since (a fact that
	// was archived later: review/archive/facts/NAME/SLUG.TIME.md).
	Now string `json:"now,omitempty"`
}

// JourneyOptions filter a journey.
type JourneyOptions struct {
	// Agent keeps only that agent's events ("" = all agents).
	Agent string
	// Since keeps only events at or after it (zero = all).
	Since time.Time
}

// Journey returns one timeline, oldest first, of what agents learned and
// decided, read from the files' own metadata: fact files (created,
// updated), archived facts, proposals (pending and decided, with who
// decided), memory writes that passed review, and the decision log.
// Bounded-memory entries carry no time of their own; those that went
// through review appear with their review.
func Journey(v *vault.Vault, o JourneyOptions) ([]Event, error) {
	var evs []Event
	add := func(e Event) {
		if e.Time.IsZero() || (o.Agent != "" && e.Agent != o.Agent) || (!o.Since.IsZero() && e.Time.Before(o.Since)) {
			return
		}
		evs = append(evs, e)
	}
	names, err := identity.List(v)
	if err != nil {
		return nil, err
	}
	for _, a := range names {
		if o.Agent != "" && a != o.Agent {
			continue
		}
		facts, err := agents.ListFacts(v, a)
		if err != nil {
			return nil, err
		}
		for _, f := range facts {
			add(Event{Time: f.Created, Agent: a, Kind: EventFactCreated, Title: f.Name, Path: f.Path})
			if f.Updated.After(f.Created) {
				add(Event{Time: f.Updated, Agent: a, Kind: EventFactUpdated, Title: f.Name, Path: f.Path})
			}
		}
		archivedFacts(v, a, add)
	}
	pending, err := List(v, Filter{Agent: o.Agent})
	if err != nil {
		return nil, err
	}
	for _, it := range pending {
		add(Event{Time: it.Provenance.Time, Agent: it.Agent, Kind: EventProposed, Title: it.Kind + ": " + it.Summary(), Path: it.Path})
	}
	des, err := vault.ReadDir(v.MustPath(vault.ArchiveDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, de := range des {
		if !de.Type().IsRegular() || !strings.HasSuffix(de.Name(), ".md") || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		it, err := readItem(v, vault.ArchiveDir+"/"+de.Name())
		if err != nil {
			continue
		}
		title := it.Kind + ": " + it.Summary()
		add(Event{Time: it.Provenance.Time, Agent: it.Agent, Kind: EventProposed, Title: title, Path: it.Path})
		kind := EventApproved
		if it.Status == StatusRejected {
			kind = EventRejected
		}
		by := title + " (by " + it.DecidedBy
		if it.DecidedBy == "" || it.DecidedBy == "obsidian" {
			by = title + " (in Obsidian" // a status edit that named nobody
		}
		if it.Why != "" {
			by += ": " + it.Why
		}
		add(Event{Time: it.DecidedAt, Agent: it.Agent, Kind: kind, Title: by + ")", Path: it.Path})
	}
	curatorPasses(v, add) // journey_curator.go
	if l, err := livelog.Open(v, livelog.Options{}); err == nil {
		if ds, err := l.ListDecisions(true); err == nil {
			for _, d := range ds {
				add(Event{Time: d.Time, Agent: d.Agent, Kind: EventDecision, Title: d.Title, Path: vault.DecisionsLog})
			}
		}
	}
	sort.SliceStable(evs, func(i, j int) bool {
		if !evs[i].Time.Equal(evs[j].Time) {
			return evs[i].Time.Before(evs[j].Time)
		}
		if ri, rj := eventOrder[evs[i].Kind], eventOrder[evs[j].Kind]; ri != rj {
			return ri < rj
		}
		return evs[i].Title < evs[j].Title
	})
	return evs, nil
}

// archivedFacts reports review/archive/facts/AGENT/SLUG.TIMESTAMP.md files:
// when they were archived (the file name) and their own created/updated.
func archivedFacts(v *vault.Vault, agent string, add func(Event)) {
	rel := agents.ArchivedFactsDir(agent)
	des, err := vault.ReadDir(v.MustPath(rel))
	if err != nil {
		return
	}
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() || !strings.HasSuffix(name, ".md") {
			continue
		}
		stem := strings.TrimSuffix(name, ".md")
		dot := strings.LastIndex(stem, ".")
		if dot < 0 {
			continue
		}
		stamp, _, _ := strings.Cut(stem[dot+1:], "-") // SLUG.TIME-2.md
		at, err := time.Parse("20060102T150405Z", stamp)
		if err != nil {
			continue
		}
		title := stem[:dot]
		if data, err := vault.ReadFile(filepath.Join(v.MustPath(rel), name)); err == nil {
			if f, err := agents.ParseFact(stem[:dot], data); err == nil {
				title = f.Name
				// What it was before it was archived, where it was then.
				was := agents.FactPath(agent, stem[:dot])
				add(Event{Time: f.Created, Agent: agent, Kind: EventFactCreated, Title: f.Name, Path: was, Now: rel + "/" + name})
				if f.Updated.After(f.Created) {
					add(Event{Time: f.Updated, Agent: agent, Kind: EventFactUpdated, Title: f.Name, Path: was, Now: rel + "/" + name})
				}
			}
		}
		add(Event{Time: at, Agent: agent, Kind: EventFactArchived, Title: title, Path: rel + "/" + name})
	}
}
