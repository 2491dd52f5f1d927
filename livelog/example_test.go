package livelog_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

// Two agents share the live log: lyra appends a signed entry, ella reads
// what is new for her and acknowledges it.
func ExampleLog_Append() {
	dir, _ := os.MkdirTemp("", "nexus-example-")
	defer os.RemoveAll(dir)
	v, _, _ := vault.Init(dir)
	v.SetDevice("vps") // this machine's name: lyra appends to her feed lyra@vps
	for _, name := range []string{"lyra", "ella"} {
		identity.Create(v, name, "", time.Now())
	}
	clock := func() time.Time { return time.Date(2026, 11, 29, 15, 5, 37, 0, time.UTC) }
	l, _ := livelog.Open(v, livelog.Options{Now: clock})

	e, err := l.Append("lyra", livelog.Entry{Channel: "deploy", Kind: "shipped", Summary: "Fixed login timeout; PR #123 merged"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("appended to", e.Segment)

	news, _ := l.ReadUnread("ella", true)
	for _, n := range news {
		fmt.Printf("ella reads: %s %s [%s/%s] %s\n", n.Time.Format(time.RFC3339), n.Agent, n.Channel, n.Kind, n.Summary)
	}
	total, _, _ := l.UnreadCount("ella")
	fmt.Println("unread after ack:", total)

	r, _ := l.Verify(context.Background())
	fmt.Println("verified:", r.OK(true), r.Counts[livelog.StatusIntact], "intact")
	// Output:
	// appended to log/live/2026-11/lyra@vps.md
	// ella reads: 2026-11-29T15:05:37Z lyra [deploy/shipped] Fixed login timeout; PR #123 merged
	// unread after ack: 0
	// verified: true 1 intact
}
