//go:build !unix

package main

import (
	"os"
	"time"
)

// cpuTime is not measured on this platform.
func cpuTime() time.Duration { return 0 }

// peakRSSMB is not measured on this platform.
func peakRSSMB(*os.ProcessState) float64 { return 0 }
