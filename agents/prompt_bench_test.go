package agents

import (
	"fmt"
	"testing"

	"github.com/nexus-memory/nexus/livelog"
)

// BenchmarkPromptUnreadAck measures the in-process part of an adapter's
// per-turn read, 'nexus prompt --only unread --ack', on a live log of
// 10,000 entries: each iteration another agent has appended 3 entries
// (not timed) and lyra's unread section shows and acknowledges them.
func BenchmarkPromptUnreadAck(b *testing.B) {
	v := promptVault(b, 0)
	l, err := livelog.Open(v, livelog.Options{})
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]livelog.Entry, 1000)
	for i := 0; i < 10; i++ {
		for k := range batch {
			batch[k] = livelog.Entry{Summary: fmt.Sprintf("entry %d", i*1000+k), Body: "a body of eighty bytes or so, to make the log about the size a real one is."}
		}
		if _, err := l.AppendBatch("ella", batch); err != nil {
			b.Fatal(err)
		}
	}
	opts := PromptOptions{Only: []string{SectionUnread}, Ack: true}
	if _, err := l.ReadUnread("lyra", true); err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		b.StopTimer()
		for k := 0; k < 3; k++ {
			n++
			if _, err := l.Append("ella", livelog.Entry{Summary: fmt.Sprintf("new %d", n)}); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		p, err := RenderPrompt(v, "lyra", opts)
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Unread.Entries) != 3 {
			b.Fatalf("%d entries shown, want 3", len(p.Unread.Entries))
		}
	}
}
