package agents

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// BenchmarkMemoryOp measures one add, replace or remove through the library,
// fsync included, on a MEMORY.md holding ten entries (about 1,000 chars).
// Besides ns/op it reports the p50 and p99 latency of the measured
// operation; the untimed setup keeps the file the same size.
//
//	go test ./agents/ -run '^$' -bench BenchmarkMemoryOp -benchtime 2000x
func BenchmarkMemoryOp(b *testing.B) {
	// The floor: one bare atomic replace of the same file (temp file,
	// write, fsync, rename, fsync of the folder), with no lock, read or scan.
	b.Run("floor-atomic-write", func(b *testing.B) {
		v := memTestVault(b, 0, 0)
		m := memOpen(b, v, TargetMemory)
		data := []byte(strings.Repeat("entry of about a hundred characters, like the others in this benchmark file. \n§\n", 10))
		lat := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			if err := vault.WriteFile(m.path, data, 0o644); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		memReportLatency(b, lat)
	})
	for _, action := range []string{ActionAdd, ActionReplace, ActionRemove} {
		b.Run(action, func(b *testing.B) {
			v := memTestVault(b, 0, 0)
			m := memOpen(b, v, TargetMemory)
			for i := range 10 {
				if _, err := m.Apply(add(fmt.Sprintf("entry %02d: staging host 10.0.1.%d uses SSH port 22%02d; deploys need approval.", i, i, i))); err != nil {
					b.Fatal(err)
				}
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				item := fmt.Sprintf("bench item %d", i)
				var before, timed, after []Op
				switch action {
				case ActionAdd:
					timed, after = []Op{add(item)}, []Op{remove(item)}
				case ActionReplace:
					old := "entry 05"
					timed = []Op{replace(old, fmt.Sprintf("entry 05: replaced %d times", i))}
				case ActionRemove:
					before, timed = []Op{add(item)}, []Op{remove(item)}
				}
				b.StopTimer()
				if before != nil {
					if _, err := m.Apply(before...); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				start := time.Now()
				if _, err := m.Apply(timed...); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				b.StopTimer()
				if after != nil {
					if _, err := m.Apply(after...); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
			}
			b.StopTimer()
			memReportLatency(b, lat)
		})
	}
}

// memReportLatency reports the p50 and p99 of lat.
func memReportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkScanText measures the security scan of a typical entry.
func BenchmarkScanText(b *testing.B) {
	s := "Staging (10.0.1.50) uses SSH port 2222, key ~/.ssh/staging_ed25519; deploys go through make deploy and need approval from ella."
	for b.Loop() {
		if err := ScanText(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderSnapshot measures the in-process part of 'nexus prompt':
// the identity, a full MEMORY.md (scanned entry by entry), USER.md and the
// memory index.
func BenchmarkRenderSnapshot(b *testing.B) {
	v := memTestVault(b, 0, 0)
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
	for b.Loop() {
		if _, err := RenderSnapshot(v, "lyra"); err != nil {
			b.Fatal(err)
		}
	}
}
