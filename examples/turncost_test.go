//go:build claudecode || openclaw

package examples

import (
	"slices"
	"testing"
	"time"
)

// logTurnCost prints one setup's line of a turn-cost table: its turns'
// p50 and p99, what they add to base's (the runtime without Nexus), and
// the CPU time per turn (cpu over turns).
func logTurnCost(t *testing.T, name string, times, base []float64, cpu time.Duration, turns int) {
	t.Helper()
	pct := func(xs []float64, p float64) float64 {
		xs = slices.Sorted(slices.Values(xs))
		return xs[min(len(xs)-1, int(p/100*float64(len(xs)-1)+0.5))]
	}
	t.Logf("%-40s turns %3d  p50 %7.1f ms  p99 %7.1f ms  overhead p50 %+6.1f ms  p99 %+6.1f ms  CPU per turn %6.1f ms",
		name, len(times), pct(times, 50), pct(times, 99), pct(times, 50)-pct(base, 50), pct(times, 99)-pct(base, 99),
		float64(cpu.Microseconds())/1000/float64(turns))
}
