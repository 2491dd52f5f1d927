package main

import (
	"github.com/nexus-memory/nexus/identity"
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
	return a
}
