package livelog

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/identity"
)

// feedHereOf returns writer's FeedHere on l.
func feedHereOf(t *testing.T, l *Log, writer string) FeedHere {
	t.Helper()
	feeds, err := l.FeedsHere(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, fh := range feeds {
		if fh.Writer == writer {
			return fh
		}
	}
	t.Fatalf("no feed of %s in %+v", writer, feeds)
	return FeedHere{}
}

// TestFeedsHereKilledBeforeHint: an append killed between writing its
// record and updating the feed's hint leaves the hint one entry behind;
// that entry is still this machine's own, not another machine's under its
// device name. An entry another machine signed above it still is.
func TestFeedsHereKilledBeforeHint(t *testing.T) {
	for _, tc := range []struct {
		name         string
		otherMachine bool // after the killed append, another machine appends as lyra@vps
		wantLast     int64
		wantNotHere  int
	}{
		{"killed before the hint", false, 2, 0},
		{"killed, then another machine under the name", true, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := twoMachines(t, "vps")
			a.append(t, "lyra", "one")
			hint := a.l.abs(hintPath(streamLive, "lyra@vps"))
			saved, err := os.ReadFile(hint)
			if err != nil {
				t.Fatal(err)
			}
			a.append(t, "lyra", "two")
			// The kill: the record is in the feed, the hint is as before.
			if err := os.WriteFile(hint, saved, 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.otherMachine {
				// B shares the name (an older Nexus without device
				// claims): its own key, appending after A's entries.
				if _, err := identity.NewDeviceKey(b.v, "lyra", "vps", time.Now()); err != nil {
					t.Fatal(err)
				}
				os.RemoveAll(a.v.MustPath("log/devices"))
				a.syncTo(t, b)
				b.append(t, "lyra", "three, from B")
				b.syncTo(t, a)
			}
			fh := feedHereOf(t, a.l, "lyra@vps")
			if !fh.AppendedHere || fh.LastHere != tc.wantLast || fh.NotHereCount != tc.wantNotHere || len(fh.NotHere) != tc.wantNotHere {
				t.Fatalf("FeedHere: appended here %v, last here %d, not here %d %+v; want last %d, not here %d",
					fh.AppendedHere, fh.LastHere, fh.NotHereCount, summaries(fh.NotHere), tc.wantLast, tc.wantNotHere)
			}
		})
	}
}
