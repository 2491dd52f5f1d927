package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestListingsHonourNexusAgent: 'review list' (and bare 'review') and
// 'journey' take the agent as every command does, --agent else
// $NEXUS_AGENT (SPEC §8), and say on stderr when the filter came from the
// environment alone. Before, both ignored $NEXUS_AGENT and listed every
// agent.
func TestListingsHonourNexusAgent(t *testing.T) {
	dir := factVault(t)
	if code, _, errs := factCLI(t, "", "--vault", dir, "agent", "add", "ella"); code != 0 {
		t.Fatalf("agent add ella: %s", errs)
	}
	for _, a := range []struct{ agent, text string }{{"lyra", "Lyra learned the staging port"}, {"ella", "Ella learned the deploy day"}} {
		if code, _, errs := factCLI(t, "", "--vault", dir, "--agent", a.agent, "retain", "--type", "project", a.text); code != 0 {
			t.Fatalf("retain as %s: %s", a.agent, errs)
		}
	}
	type listing struct {
		Success bool
		Agent   string
		Count   int
		Items   []struct{ Agent string }
		Events  []struct{ Agent string }
	}
	cases := []struct {
		name   string
		env    string   // $NEXUS_AGENT
		flags  []string // before the command
		want   []string // the agents listed; nil: every agent
		note   bool     // the stderr note on the environment's filter
		code   int
		errHas string
	}{
		{name: "env names the agent", env: "lyra", want: []string{"lyra"}, note: true},
		{name: "flag wins over env", env: "lyra", flags: []string{"--agent", "ella"}, want: []string{"ella"}},
		{name: "flag alone", flags: []string{"--agent", "ella"}, want: []string{"ella"}},
		{name: "neither: every agent", want: []string{"ella", "lyra"}},
		{name: "env names no agent", env: "lyar", code: exitRefused, errHas: "lyar"},
	}
	commands := [][]string{{"review", "list"}, {"review"}, {"journey"}}
	for _, tc := range cases {
		for _, command := range commands {
			t.Run(tc.name+"/"+strings.Join(command, " "), func(t *testing.T) {
				t.Setenv("NEXUS_AGENT", tc.env)
				args := append(append([]string{"--vault", dir}, tc.flags...), command...)
				code, out, errs := factCLI(t, "", args...)
				if code != tc.code {
					t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errs)
				}
				if tc.code != 0 {
					if !strings.Contains(errs, tc.errHas) {
						t.Fatalf("error %q does not name %q", errs, tc.errHas)
					}
					return
				}
				if got := strings.Contains(errs, "($NEXUS_AGENT)"); got != tc.note {
					t.Errorf("note on stderr = %v, want %v: %q", got, tc.note, errs)
				}
				for _, a := range []string{"lyra", "ella"} {
					listed := strings.Contains(out, a)
					if wanted := strings.Contains(strings.Join(tc.want, " "), a); listed != wanted {
						t.Errorf("%s listed = %v, want %v:\n%s", a, listed, wanted, out)
					}
				}
				// --json: the same items, the filter named, stdout one document.
				code, out, errs = factCLI(t, "", append([]string{"--json"}, args...)...)
				var l listing
				if code != 0 || json.Unmarshal([]byte(out), &l) != nil || !l.Success {
					t.Fatalf("--json: exit %d %q %q", code, out, errs)
				}
				if strings.Contains(errs, "($NEXUS_AGENT)") {
					t.Errorf("--json still notes on stderr: %q", errs)
				}
				got := map[string]bool{}
				for _, it := range l.Items {
					got[it.Agent] = true
				}
				for _, e := range l.Events {
					got[e.Agent] = true
				}
				if len(got) != len(tc.want) {
					t.Errorf("--json lists agents %v, want %v", got, tc.want)
				}
				for _, a := range tc.want {
					if !got[a] {
						t.Errorf("--json lacks %s: %s", a, out)
					}
				}
				if len(tc.want) == 1 && l.Agent != tc.want[0] {
					t.Errorf("--json agent = %q, want %q", l.Agent, tc.want[0])
				}
			})
		}
	}
}
