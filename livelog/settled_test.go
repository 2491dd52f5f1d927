package livelog

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

// TestForkSettledVerdict: two machines append as lyra@vps, forking its
// feed (TestForkSameDeviceName). Once B takes a name of its own and its
// claim (naming vps as a former name) arrives, the fork is settled: verify
// lists it, with a note, and passes unless strict. What the rename does
// not explain stays a problem: a fork nobody settled, or the other branch
// signed with a key IDENTITY.md does not list.
func TestForkSettledVerdict(t *testing.T) {
	cases := []struct {
		name        string
		rename      bool // B takes the name laptop, and its claim reaches A
		identity    bool // B's IDENTITY.md (its key for vps) reaches A
		ok, okStrct bool
	}{
		{name: "settled", rename: true, identity: true, ok: true},
		{name: "not settled", rename: false, identity: true},
		{name: "settled, other branch's key not listed", rename: true, identity: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := twoMachines(t, "vps") // B wrongly reuses A's device name
			if _, err := identity.NewDeviceKey(b.v, "lyra", "vps", time.Now()); err != nil {
				t.Fatal(err)
			}
			a.append(t, "lyra", "on A 1")
			a.append(t, "lyra", "on A 2")
			b.append(t, "lyra", "on B 1")
			b.append(t, "lyra", "on B 2")
			rel := FeedPath("lyra@vps", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
			dataB, err := os.ReadFile(b.v.MustPath(rel))
			if err != nil {
				t.Fatal(err)
			}
			conflict := strings.TrimSuffix(rel, ".md") + ".sync-conflict-20261129-150000-ABCDEFG.md"
			if err := os.WriteFile(a.v.MustPath(conflict), dataB, 0o644); err != nil {
				t.Fatal(err)
			}
			copyFile := func(rel string) {
				t.Helper()
				data, err := os.ReadFile(b.v.MustPath(rel))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(a.v.MustPath(rel[:strings.LastIndex(rel, "/")]), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(a.v.MustPath(rel), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.identity {
				copyFile(identity.IdentityPath("lyra"))
			}
			if tc.rename {
				if err := b.v.SetDevice("laptop"); err != nil {
					t.Fatal(err)
				}
				b.append(t, "lyra", "on B, as laptop") // writes the claim of laptop
				copyFile(vault.DevicesDir + "/laptop.md")
			}
			r := mustVerify(t, a.l)
			if r.Counts[StatusForked] != 4 { // #1 and #2, on each branch
				t.Fatalf("forks: %v %+v", r.Counts, r.Findings)
			}
			if r.OK(false) != tc.ok || r.OK(true) != tc.okStrct {
				t.Fatalf("OK = %v, strict %v; want %v, %v: %v %+v", r.OK(false), r.OK(true), tc.ok, tc.okStrct, r.Counts, r.Findings)
			}
			note := strings.Join(r.Notes, "\n")
			settled := 0
			for _, f := range r.Findings {
				if f.Settled {
					settled++
				}
			}
			if tc.rename && tc.identity {
				// Both forked entries and B's entries not pinned here.
				if settled < 3 || !strings.Contains(note, "lyra@vps") || !strings.Contains(note, "no longer grows") {
					t.Fatalf("settled %d, notes %q: %+v", settled, r.Notes, r.Findings)
				}
			}
			if !tc.rename && (settled != 0 || strings.Contains(note, "no longer grows")) {
				t.Fatalf("an unsettled fork marked settled: %q %+v", r.Notes, r.Findings)
			}
			for _, f := range r.Findings {
				if f.Settled && f.Status != StatusForked && f.Status != StatusKeyChanged {
					t.Errorf("settled a %s finding: %+v", f.Status, f)
				}
				if !f.Benign() && tc.ok {
					t.Errorf("a problem left: %+v", f)
				}
			}
		})
	}
}
