package main

import (
	"strings"
	"testing"
)

// TestAgentShowWithAndWithoutRole: an agent without a role says so and
// where to set it (not "lyra — "), and its identity shows no empty bullets.
func TestAgentShowWithAndWithoutRole(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("NEXUS_AGENT", "")
	for _, args := range [][]string{{"init", dir}, {"--vault", dir, "agent", "add", "lyra"}, {"--vault", dir, "agent", "add", "ella", "--role", "연구와 계획"}} {
		if code, _, errs := logCLI(t, "", args...); code != 0 {
			t.Fatalf("%v: %s", args, errs)
		}
	}
	for name, head := range map[string]string{
		"lyra": "lyra (no role set: edit agents/lyra/IDENTITY.md)",
		"ella": "ella — 연구와 계획",
	} {
		code, out, errs := logCLI(t, "", "--vault", dir, "agent", "show", name)
		if code != 0 {
			t.Fatalf("agent show %s: %s", name, errs)
		}
		lines := strings.Split(out, "\n")
		if lines[0] != head {
			t.Errorf("agent show %s: first line %q, want %q", name, lines[0], head)
		}
		for i, l := range lines {
			if strings.HasSuffix(l, " — ") || strings.TrimSpace(l) == "-" {
				t.Errorf("agent show %s line %d: %q", name, i+1, l)
			}
		}
		// Each device's key, this machine's marked: what a person compares
		// before 'nexus log trust' elsewhere.
		if !strings.Contains(out, "SHA256:") || !strings.Contains(out, "(this machine's key)") {
			t.Errorf("agent show %s lists no device key of this machine:\n%s", name, out)
		}
	}
}
