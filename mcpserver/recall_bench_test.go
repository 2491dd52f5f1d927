package mcpserver_test

import (
	"fmt"
	"os/exec"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/vault"
)

// Recall recording must add under 5% to fact_read and memory_search
// (docs/curation.md). These benchmarks run two 'nexus serve --stdio'
// processes on two copies of one vault, one with curator: recall: false,
// and interleave the calls, so both see the same machine load; they
// report each side's p50 and the overhead.
//
//	go test ./mcpserver -run '^$' -bench Recall -benchtime 2000x

func recallPair(b *testing.B, src string) (on, off *sdk.ClientSession) {
	b.Helper()
	dst := b.TempDir() + "/off"
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		b.Fatalf("copy vault: %v %s", err, out)
	}
	vOff, err := vault.Open(dst)
	if err != nil {
		b.Fatal(err)
	}
	no := false
	if err := vOff.UpdateConfig(func(c *vault.Config) error { c.Curator.Recall = &no; return nil }); err != nil {
		b.Fatal(err)
	}
	vOn, err := vault.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	return connectStdio(b, vOn, "lyra", nil), connectStdio(b, vOff, "lyra", nil)
}

func reportPair(b *testing.B, on, off latencies) {
	p50 := func(l latencies) float64 {
		s := slices.Clone(l)
		slices.Sort(s)
		return float64(s[len(s)/2]) / 1e6
	}
	a, c := p50(on), p50(off)
	b.ReportMetric(a, "on-p50-ms")
	b.ReportMetric(c, "off-p50-ms")
	b.ReportMetric((a-c)/c*100, "overhead-%")
}

func BenchmarkStdioRecallFactRead(b *testing.B) {
	v := mustVault(b, "lyra")
	for i := range 50 {
		if _, err := agents.WriteFact(v, "lyra", agents.FactInput{Name: fmt.Sprintf("fact %d", i), Description: "d", Type: agents.FactProject, Body: "body of the fact"}, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	on, off := recallPair(b, v.Root())
	args := map[string]any{"slug": "fact-7"}
	timedCall(b, on, "fact_read", args)
	timedCall(b, off, "fact_read", args)
	lon, loff := make(latencies, 0, b.N), make(latencies, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		args := map[string]any{"slug": fmt.Sprintf("fact-%d", i%50)}
		if i%2 == 0 {
			lon = append(lon, timedCall(b, on, "fact_read", args))
			loff = append(loff, timedCall(b, off, "fact_read", args))
		} else {
			loff = append(loff, timedCall(b, off, "fact_read", args))
			lon = append(lon, timedCall(b, on, "fact_read", args))
		}
	}
	b.StopTimer()
	reportPair(b, lon, loff)
}

func BenchmarkStdioRecallMemorySearch10k(b *testing.B) {
	dir, err := searchVault()
	if err != nil {
		b.Fatal(err)
	}
	v, err := vault.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := execNexus(v.Root(), "agent", "show", "lyra"); err != nil {
		mustAgentIn(b, v, "lyra")
	}
	on, off := recallPair(b, dir)
	for _, cs := range []*sdk.ClientSession{on, off} {
		for deadline := time.Now().Add(5 * time.Minute); ; {
			r := mustOK(b, cs, "memory_search", map[string]any{"query": "unique9999"})
			if hits, _ := r["hits"].([]any); len(hits) > 0 {
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("index never caught up")
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	lon, loff := make(latencies, 0, b.N), make(latencies, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		args := map[string]any{"query": words[i%len(words)] + " " + words[(i*7+3)%len(words)], "maxResults": 10}
		if i%2 == 0 {
			lon = append(lon, timedCall(b, on, "memory_search", args))
			loff = append(loff, timedCall(b, off, "memory_search", args))
		} else {
			loff = append(loff, timedCall(b, off, "memory_search", args))
			lon = append(lon, timedCall(b, on, "memory_search", args))
		}
	}
	b.StopTimer()
	reportPair(b, lon, loff)
}
