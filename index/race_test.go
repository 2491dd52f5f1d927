//go:build race

package index

// raceEnabled: the race detector slows analysis about tenfold, so the
// hostile-files test indexes a smaller huge note under it.
const raceEnabled = true
