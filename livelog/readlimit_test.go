package livelog

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestReadUnreadLimitRemaining: remaining is what a full merge from the
// same cursor finds less what the call returned, whether the unread
// count is cached or not, with several feeds, hand-typed text, a reader
// with a cursor already, and a conflict copy of a feed (entries passed
// once: the count falls back to the merge); and UnreadCount agrees.
func TestReadUnreadLimitRemaining(t *testing.T) {
	scenarios := []struct {
		name  string
		setup func(t *testing.T, l *Log)
	}{
		{"one feed", func(t *testing.T, l *Log) {
			for i := range 7 {
				mustAppend(t, l, "lyra", fmt.Sprint("lyra ", i))
			}
		}},
		{"feeds and hand-typed text", func(t *testing.T, l *Log) {
			for i := range 12 {
				mustAppend(t, l, []string{"lyra", "mallory", "ella"}[i%3], fmt.Sprint("entry ", i))
				if i%4 == 1 {
					appendRaw(t, segmentPath(l), fmt.Sprintf("a person's note %d\n\n", i))
				}
			}
			appendRaw(t, feedFile(l, "mallory"), "still typing") // in progress: not unread yet
		}},
		{"reader has a cursor", func(t *testing.T, l *Log) {
			for i := range 5 {
				mustAppend(t, l, "lyra", fmt.Sprint("old ", i))
			}
			if _, err := l.ReadUnread("ella", true); err != nil {
				t.Fatal(err)
			}
			for i := range 9 {
				mustAppend(t, l, []string{"lyra", "mallory"}[i%2], fmt.Sprint("new ", i))
			}
		}},
		{"conflict copy", func(t *testing.T, l *Log) {
			for i := range 6 {
				mustAppend(t, l, []string{"lyra", "mallory"}[i%2], fmt.Sprint("entry ", i))
			}
			data, err := os.ReadFile(feedFile(l, "lyra"))
			if err != nil {
				t.Fatal(err)
			}
			conflict := strings.TrimSuffix(feedFile(l, "lyra"), ".md") + ".sync-conflict-20261129-150000-ABCDEFG.md"
			if err := os.WriteFile(conflict, data, 0o644); err != nil {
				t.Fatal(err)
			}
			mustAppend(t, l, "lyra", "after the copy")
		}},
		{"nothing unread", func(t *testing.T, l *Log) {
			mustAppend(t, l, "ella", "own entry")
		}},
	}
	for _, sc := range scenarios {
		for _, limit := range []int{0, 1, 3, 100} {
			for _, ack := range []bool{false, true} {
				for _, warm := range []bool{false, true} {
					name := fmt.Sprintf("%s/limit %d/ack %v/warm %v", sc.name, limit, ack, warm)
					t.Run(name, func(t *testing.T) {
						v := mustVault(t)
						l := mustLog(t, v)
						sc.setup(t, l)
						all, err := mustLog(t, v).Unread("ella") // a full merge, no cache
						if err != nil {
							t.Fatal(err)
						}
						if warm {
							// The count agrees with the merge, a conflict
							// copy's entries counted once.
							total, byAgent, err := l.UnreadCount("ella")
							if err != nil {
								t.Fatal(err)
							}
							wantBy := map[string]int{}
							for _, e := range all {
								wantBy[e.Agent]++
							}
							if total != len(all) || fmt.Sprint(byAgent) != fmt.Sprint(wantBy) {
								t.Fatalf("UnreadCount = %d %v, want %d %v", total, byAgent, len(all), wantBy)
							}
						}
						es, remaining, err := l.ReadUnreadLimit("ella", limit, ack)
						if err != nil {
							t.Fatal(err)
						}
						want := all[:min(limit, len(all))]
						if fmt.Sprint(summaries(es)) != fmt.Sprint(summaries(want)) {
							t.Fatalf("got %q, want %q", summaries(es), summaries(want))
						}
						if remaining != len(all)-len(want) {
							t.Fatalf("remaining %d, want %d (%d unread, %d returned)", remaining, len(all)-len(want), len(all), len(want))
						}
						rest, err := mustLog(t, v).Unread("ella")
						if err != nil {
							t.Fatal(err)
						}
						after := all
						if ack {
							after = all[len(want):]
						}
						if fmt.Sprint(summaries(rest)) != fmt.Sprint(summaries(after)) {
							t.Fatalf("unread after the call %q, want %q", summaries(rest), summaries(after))
						}
						// A second call from there agrees too.
						if _, remaining2, err := l.ReadUnreadLimit("ella", 1, false); err != nil || remaining2 != max(len(after)-1, 0) {
							t.Fatalf("second call: remaining %d, %v; want %d", remaining2, err, max(len(after)-1, 0))
						}
					})
				}
			}
		}
	}
}
