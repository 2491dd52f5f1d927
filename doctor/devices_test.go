package doctor

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

// TestForkSettledByRename: two machines shared the name "box" and forked
// lyra's feed (TestForkCheck). Once one of them takes a name of its own,
// the fork no longer grows: on that machine (box is a name it had), and on
// the other (the claim of the new name, synced, names box as a former
// name), the fork and the conflict copy are notes and doctor passes.
func TestForkSettledByRename(t *testing.T) {
	a := newMachine(t, "box")
	a.append(t, "lyra", "on A 1")
	b := cloneMachine(t, a, "box", false) // wrongly the same name
	a.append(t, "lyra", "on A 2")
	b.append(t, "lyra", "on B 2")
	rel := livelog.FeedPath("lyra@box", feedT0)
	dataB, _ := os.ReadFile(b.v.MustPath(rel))
	conflict := strings.TrimSuffix(rel, ".md") + ".sync-conflict-20261103-090000-ABCDEFG.md"
	if err := os.WriteFile(a.v.MustPath(conflict), dataB, 0o644); err != nil {
		t.Fatal(err)
	}
	idB, _ := os.ReadFile(b.v.MustPath(identity.IdentityPath("lyra")))
	os.WriteFile(a.v.MustPath(identity.IdentityPath("lyra")), idB, 0o644)
	later := feedT0.Add(time.Hour)
	rep := runAt(t, a, later)
	if rep.OK {
		t.Fatalf("the fork passes before the rename")
	}

	// B takes a name of its own and appends under it; its claim arrives.
	if err := b.v.SetDevice("desk"); err != nil {
		t.Fatal(err)
	}
	b.append(t, "lyra", "on B, as desk")
	claim, err := os.ReadFile(b.v.MustPath(vault.DevicesDir + "/desk.md"))
	if err != nil || !strings.Contains(string(claim), "former: box") {
		t.Fatalf("claim of desk: %q, %v", claim, err)
	}
	os.WriteFile(a.v.MustPath(vault.DevicesDir+"/desk.md"), claim, 0o644)
	only(t, runAt(t, a, later),
		[3]string{"conflicts", "note", "until one of them took a name of its own"},
		[3]string{"forks", "note", "the fork no longer grows"},
		[3]string{"device-name", "note", `lists 2 keys for device "box"`},
	)
	// On B, box is a name it had. (B still cannot tell ella's key, made
	// on A under box, from one of its own it lost: the key-pair check's,
	// as in TestDeviceNameTwoMachines.)
	dataA, _ := os.ReadFile(a.v.MustPath(rel))
	os.WriteFile(b.v.MustPath(conflict), dataA, 0o644)
	for _, f := range runAt(t, b, later).Findings() {
		switch f.Check {
		case "conflicts", "forks", "device-name", "machine":
			if f.Severity == SeverityProblem {
				t.Errorf("doctor on the renamed machine: %s: %s", f.Check, f.Problem)
			}
		}
	}
}
