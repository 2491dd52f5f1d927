//go:build !lite

package main

import (
	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/vault"
)

// recordSearch records an agent's search and its hits as a recall signal
// (docs/curation.md); a person's search (no agent) records nothing.
func recordSearch(g *globals, v *vault.Vault, query string, res *index.Results) {
	agent, err := g.agentName()
	if err != nil || res == nil {
		return
	}
	var paths []string
	for _, h := range res.Hits {
		p := h.Path
		if h.Kind == index.KindLog && h.Line > 0 {
			p = agents.LogHit(h.Path, h.Line) // a read covering the line is a read of that entry
		}
		if len(paths) == 0 || paths[len(paths)-1] != p {
			paths = append(paths, p)
		}
	}
	agents.RecordHits(v, agent, query, "cli", paths)
	agents.FlushRecall()
}
