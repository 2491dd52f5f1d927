package index

import "testing"

func TestFanIn(t *testing.T) {
	defer func(n int) { maxMergeFanIn = n }(maxMergeFanIn)
	for _, c := range []struct{ max, n, want int }{
		{40, 1, 1},
		{40, 40, 40},
		{40, 41, 7},    // two levels: 7 merges of 6 or 7, then 7
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
