package agents

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/livelog"
)

// BenchmarkRenderSessionStart is a whole session start in process — the
// identity, a 20-entry MEMORY.md, a 10-entry USER.md, a 100-fact memory
// index, 20 unread entries, a checkpoint and a decision — the prompt
// path that scans what it shows (docs/scan.md, "At read time"). Run:
//
//	go test ./agents -run '^$' -bench RenderSessionStart
func BenchmarkRenderSessionStart(b *testing.B) {
	v := promptVault(b, 20)
	m := memOpen(b, v, TargetMemory)
	u := memOpen(b, v, TargetUser)
	for i := range 20 {
		if _, err := m.Apply(add(fmt.Sprintf("note %02d: staging host 10.0.1.%d uses port 22%02d; ask ella first.", i, i, i))); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 10 {
		if _, err := u.Apply(add(fmt.Sprintf("preference %02d: concise answers, Korean ok (사용자 선호 %d)", i, i))); err != nil {
			b.Fatal(err)
		}
	}
	now := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	for i := range 100 {
		in := FactInput{Name: fmt.Sprintf("service %03d", i), Description: fmt.Sprintf("how service %d is deployed, who owns it and which token it uses", i), Type: "project", Body: "staging first"}
		if _, err := WriteFact(v, "lyra", in, now); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := livelog.LoadCheckpoint(v, "lyra"); err != nil {
		b.Fatal(err)
	}
	// Every section; and every section but the memory index, whose
	// SyncIndex stats the fact files (I/O that drowns the scans' CPU).
	for _, sub := range []struct {
		name    string
		without []string
	}{{"all", nil}, {"without index", []string{SectionMemoryIndex}}} {
		b.Run(sub.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := RenderPrompt(v, "lyra", PromptOptions{Without: sub.without}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIndexReadScan is the read-time scan of a 100-line memory
// index in a cold process (nothing remembered), the one scan the session
// start adds over text it did not scan before (memory entries and
// checkpoints were scanned already). A server remembers its verdicts.
func BenchmarkIndexReadScan(b *testing.B) {
	var lines []string
	for i := range 100 {
		lines = append(lines, IndexLine(fmt.Sprintf("service-%03d", i), fmt.Sprintf("service %03d", i), fmt.Sprintf("how service %d is deployed, who owns it and which token it uses", i)))
	}
	body := strings.Join(lines, "\n")
	for b.Loop() {
		b.StopTimer()
		clear(indexLineVerdicts.m) // a cold process: every line scanned
		b.StartTimer()
		if out := withholdIndexLines("lyra", body); len(out) != len(body) {
			b.Fatal("withheld a clean line")
		}
	}
}
