//go:build soak

package livelog

import "testing"

// The full must-hold counts (issue 11), on the feeds layout. Run:
// go test -tags soak -run Soak ./livelog/

// TestConcurrentProcessesSoak: 8 processes × 2,000 appends over three
// writers = exactly 16,000 entries, every feed numbered without a gap,
// all verified.
func TestConcurrentProcessesSoak(t *testing.T) {
	concurrentAppends(t, 8, 2000)
}

// TestCursorExactlyOnceSoak: 8 processes × 2,000 appends over three
// writers (ella among them) while two sessions of ella read and
// acknowledge: each of the 12,000 entries of the others exactly once.
func TestCursorExactlyOnceSoak(t *testing.T) {
	cursorExactlyOnce(t, []string{"lyra", "ella", "mallory", "lyra", "ella", "mallory", "lyra", "mallory"}, 2000)
}
