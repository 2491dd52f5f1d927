//go:build soak

package livelog

import "testing"

// TestConcurrentProcessesSoak is the full must-hold count: 8 processes ×
// 2,000 appends = exactly 16,000 entries. Run: go test -tags soak -run Soak ./livelog/
func TestConcurrentProcessesSoak(t *testing.T) {
	concurrentAppends(t, 8, 2000)
}
