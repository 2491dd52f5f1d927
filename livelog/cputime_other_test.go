//go:build !unix

package livelog

import "time"

// cpuTime is zero where getrusage is missing (Windows): the benchmark then
// reports wall time only, and its cpu-us/op reads 0.
func cpuTime() time.Duration { return 0 }
