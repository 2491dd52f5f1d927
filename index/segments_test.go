package index

import (
	"context"
	"testing"
)

func TestFanIn(t *testing.T) {
	defer func(n int) { maxMergeFanIn = n }(maxMergeFanIn)
	for _, c := range []struct{ max, n, want int }{
		{40, 1, 1},
		{40, 40, 40},
		{40, 41, 7},    // two levels: six merges of 6 or 7, then one of 6
		{40, 106, 11},  // 10k notes
		{40, 1055, 33}, // 100k notes: two levels
		{40, 1600, 40}, // the most two levels take
		{40, 1601, 12}, // three levels
		{4, 21, 3},     // TestRebuildMatchesIncremental
		{4, 7, 3},
		{4, 3, 3},
	} {
		maxMergeFanIn = c.max
		if got := fanIn(c.n); got != c.want {
			t.Errorf("fanIn(%d) with at most %d = %d, want %d", c.n, c.max, got, c.want)
		}
	}
}

// TestRebuildEmptyVault: a rebuild of a vault without a note makes an
// empty index that answers.
func TestRebuildEmptyVault(t *testing.T) {
	v := mustVault(t, nil)
	ix := mustOpen(t, v, Options{NoServe: true})
	if err := ix.Rebuild(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if res := mustSearch(t, ix, Query{Text: "anything"}); len(res.Hits) != 0 {
		t.Errorf("an empty vault: %d hits", len(res.Hits))
	}
}
