package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// BenchmarkReviewList1000Cold runs 'nexus review' as a new process (cold:
// a fresh binary start, nothing cached in memory) on a vault with 1,000
// pending items; target: p50 under 50 ms. The binary is built once, before
// the timer starts.
func BenchmarkReviewList1000Cold(b *testing.B) {
	dir := b.TempDir()
	bin := buildBinary(b)
	v, _, err := vault.Init(filepath.Join(dir, "vault"))
	if err != nil {
		b.Fatal(err)
	}
	for _, a := range []string{"lyra", "orion"} {
		if _, err := agents.Add(v, a, "bench", time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		agent := []string{"lyra", "orion"}[i%2]
		in := agents.FactInput{Name: fmt.Sprintf("Proposal number %d", i), Description: "something an agent wants to keep", Type: agents.FactFeedback,
			Body: "A proposed fact of a few sentences. It says what the agent learned and why it matters."}
		if _, err := retention.Retain(v, agent, in, retention.Provenance{Session: "s-1", Source: "log:2026-11-01"}, t0.Add(time.Duration(i)*time.Minute)); err != nil {
			b.Fatal(err)
		}
	}
	env := append(os.Environ(), "NEXUS_AGENT=", "NEXUS_VAULT="+v.Root())
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin, "review")
		cmd.Env = env
		start := time.Now()
		out, err := cmd.Output()
		durs = append(durs, time.Since(start))
		if err != nil || len(out) < 1000*20 {
			b.Fatalf("nexus review: %v (%d bytes)", err, len(out))
		}
	}
	b.StopTimer()
	// The same binary doing nothing ('nexus --help'): the process start
	// and package initialisation every command pays, measured alongside
	// so that a loaded machine shows in both numbers.
	base := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin, "--help")
		cmd.Env = env
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		base = append(base, time.Since(start))
	}
	b.ReportMetric(p50ms(durs), "p50-ms")
	b.ReportMetric(pct(durs, 90), "p90-ms")
	b.ReportMetric(p50ms(base), "startup-p50-ms")
}

func p50ms(d []time.Duration) float64 { return pct(d, 50) }

func pct(d []time.Duration, p int) float64 {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[len(s)*p/100].Microseconds()) / 1000
}
