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
	agents.RecordHits(v, agent, query, "cli", res.RecallPaths())
	agents.FlushRecall()
}
