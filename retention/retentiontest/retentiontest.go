// Package retentiontest holds the helpers that the tests of the packages
// built on review (curator, conflicts) share: a vault with two agents, a
// fact, a retained item, and reads of vault files. retention's own tests
// keep theirs in package retention, which cannot import this one.
package retentiontest

import (
	"os"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// T0 is the tests' clock: 2026-11-29 15:00 UTC.
var T0 = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

// MustVault makes a vault in a temporary folder with the agents lyra and
// orion.
func MustVault(tb testing.TB) *vault.Vault {
	tb.Helper()
	v, _, err := vault.Init(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	for _, a := range []string{"lyra", "orion"} {
		if _, err := agents.Add(v, a, "tester", T0); err != nil {
			tb.Fatal(err)
		}
	}
	return v
}

// Fact is a feedback fact called name, with a description and a body.
func Fact(name string) agents.FactInput {
	return agents.FactInput{Name: name, Description: "about " + name, Type: agents.FactFeedback, Body: "The body of " + name + "."}
}

// MustRetain files in for review as agent's, at the given time.
func MustRetain(tb testing.TB, v *vault.Vault, agent string, in agents.FactInput, at time.Time) retention.Item {
	tb.Helper()
	it, err := retention.Retain(v, agent, in, retention.Provenance{Session: "s-1", Source: "log:2026-11-29T02:11Z"}, at)
	if err != nil {
		tb.Fatalf("Retain(%q): %v", in.Name, err)
	}
	return it
}

// ReadFile is the content of the vault file rel.
func ReadFile(tb testing.TB, v *vault.Vault, rel string) string {
	tb.Helper()
	data, err := os.ReadFile(v.MustPath(rel))
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

// Exists reports whether the vault file rel exists.
func Exists(v *vault.Vault, rel string) bool {
	_, err := os.Stat(v.MustPath(rel))
	return err == nil
}
