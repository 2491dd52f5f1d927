package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// buildBinary builds the nexus binary into a temp folder, for tests and
// benchmarks that run it as a separate process.
func buildBinary(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "nexus")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		tb.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}
