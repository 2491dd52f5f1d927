package curator

import (
	"os"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/vault"
)

// The helpers below are the retention tests' own (retention_test.go), for
// the curator's tests, which moved out of that package.

var t0 = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

func mustVault(tb testing.TB) *vault.Vault {
	tb.Helper()
	v, _, err := vault.Init(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	for _, a := range []string{"lyra", "orion"} {
		if _, err := agents.Add(v, a, "tester", t0); err != nil {
			tb.Fatal(err)
		}
	}
	return v
}

func fact(name string) agents.FactInput {
	return agents.FactInput{Name: name, Description: "about " + name, Type: agents.FactFeedback, Body: "The body of " + name + "."}
}

func readFile(tb testing.TB, v *vault.Vault, rel string) string {
	tb.Helper()
	data, err := os.ReadFile(v.MustPath(rel))
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

func exists(v *vault.Vault, rel string) bool {
	_, err := os.Stat(v.MustPath(rel))
	return err == nil
}
