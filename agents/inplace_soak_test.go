//go:build soak

package agents

import "testing"

// TestInPlaceSavesSoak is the in-place save race at 10,000 saves of
// MEMORY.md (agents in goroutines, then in two other processes) and 10,000
// of a fact file (inplace_race_test.go says what an overwritten save is):
// 0 overwritten. About a minute per file.
//
//	go test -tags soak ./agents -run TestInPlaceSavesSoak -v
func TestInPlaceSavesSoak(t *testing.T) {
	t.Run("MEMORY.md", func(t *testing.T) { raceMemory(t, 10_000, 3) })
	t.Run("fact file", func(t *testing.T) { raceFact(t, 10_000, 3) })
	t.Run("MEMORY.md, agent processes", func(t *testing.T) { raceMemoryProcesses(t, 10_000, 2) })
}
