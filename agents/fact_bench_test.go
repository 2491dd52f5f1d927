package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// benchVault returns a vault whose agent lyra has n fact files (written
// directly, as a person or an import would) and a synced index, with the
// index limit raised above n.
func benchVault(b *testing.B, n int) *vault.Vault {
	b.Helper()
	v := mustFactVault(b)
	if err := v.UpdateConfig(func(c *vault.Config) error { c.MemoryIndexLineLimit = 2 * n; return nil }); err != nil {
		b.Fatal(err)
	}
	v, err := vault.Open(v.Root())
	if err != nil {
		b.Fatal(err)
	}
	dir := v.MustPath(HomePath("lyra", FactsDir))
	for i := range n {
		in := FactInput{Name: fmt.Sprintf("Existing fact %05d", i), Description: "one of many facts, with a description of usual length", Type: FactProject,
			Body: "A body of a few lines.\nSecond line of the fact body."}
		data, err := renderFact(in, factNow, factNow)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("existing-fact-%05d.md", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// Age the files so the cache trusts them.
	old := time.Now().Add(-time.Hour)
	for i := range n {
		os.Chtimes(filepath.Join(dir, fmt.Sprintf("existing-fact-%05d.md", i)), old, old)
	}
	if err := SyncIndex(v, "lyra"); err != nil {
		b.Fatal(err)
	}
	return v
}

// BenchmarkWriteFact10k writes new facts into an agent home that already
// holds 10,000; target: p50 under 5 ms.
func BenchmarkWriteFact10k(b *testing.B) {
	v := benchVault(b, 10000)
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		_, err := WriteFact(v, "lyra", FactInput{Name: fmt.Sprintf("New fact %d", i), Description: "written during the benchmark", Type: FactReference, Body: "Body."}, factNow)
		durs = append(durs, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportPercentiles(b, durs)
}

// BenchmarkSyncIndex10kUnchanged is the per-command re-sync when nothing
// changed on disk.
func BenchmarkSyncIndex10kUnchanged(b *testing.B) {
	v := benchVault(b, 10000)
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := SyncIndex(v, "lyra"); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, durs)
}

func reportPercentiles(b *testing.B, durs []time.Duration) {
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	if len(durs) == 0 {
		return
	}
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(durs[len(durs)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkWriteFactEmpty is the same write into an empty home: the cost
// that does not depend on how many facts exist.
func BenchmarkWriteFactEmpty(b *testing.B) {
	v := mustFactVault(b)
	if err := v.UpdateConfig(func(c *vault.Config) error { c.MemoryIndexLineLimit = 1 << 20; return nil }); err != nil {
		b.Fatal(err)
	}
	v, _ = vault.Open(v.Root())
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		_, err := WriteFact(v, "lyra", FactInput{Name: fmt.Sprintf("New fact %d", i), Description: "written during the benchmark", Type: FactReference, Body: "Body."}, factNow)
		durs = append(durs, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportPercentiles(b, durs)
}

// BenchmarkFloorDurableWrite is one vault.WriteFile of a fact-sized file:
// the least a durable fact write can cost on the disk at that moment.
func BenchmarkFloorDurableWrite(b *testing.B) {
	dir := b.TempDir()
	data := []byte("---\nname: x\ndescription: y\ntype: user\n---\nbody\n")
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := vault.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.md", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, durs)
}
