package main

import (
	"fmt"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// describeAgent gathers what 'agent list' and 'agent show' print about one
// agent. Capabilities add their fields here as they land.
func describeAgent(v *vault.Vault, name string) agentJSON {
	a := agentJSON{Name: name, Home: identity.Home(name)}
	if id, err := identity.Load(v, name); err == nil {
		a.Role = id.Role
		a.Fingerprint = id.Fingerprint()
	} else {
		a.Fingerprint = "(invalid: " + err.Error() + ")"
	}
	a.MemoryUsage = memoryUsage(v, name, agents.TargetMemory)
	a.UserUsage = memoryUsage(v, name, agents.TargetUser)
	if sum, err := retention.Pending(v); err == nil {
		if p, ok := sum[name]; ok && p.Count > 0 {
			a.Pending = &p
		}
	}
	return a
}

// pendingText is "N since DATE" for an agent's items waiting in review, or
// "none".
func pendingText(p *retention.PendingSummary) string {
	if p == nil || p.Count == 0 {
		return "none"
	}
	return fmt.Sprintf("%d since %s", p.Count, p.Oldest.UTC().Format("2006-01-02"))
}

// memoryUsage returns a bounded-memory file's usage, "67% — 1,474/2,200
// chars", or "(unreadable: ...)".
func memoryUsage(v *vault.Vault, name string, t agents.Target) string {
	m, err := agents.OpenMemory(v, name, t)
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	entries, err := m.Entries()
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return agents.FormatUsage(agents.CharCount(entries), m.Limit())
}
