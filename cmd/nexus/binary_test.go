package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// TestMain removes what the tests made once for all (the binaries, the
// fixture vault) once all have run.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, b := range builds {
		if b.dir != "" {
			os.RemoveAll(b.dir)
		}
	}
	for _, d := range cleanupDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// cleanupDirs are removed once all tests ran.
var cleanupDirs []string

// build is one binary of this package, built on first use and shared by
// every test and benchmark of the run: a link of the full nexus takes
// seconds, and several tests run it as a separate process.
type build struct {
	once sync.Once
	tags string   // go build -tags
	env  []string // added to go build's environment
	name string   // file name, ".exe" added on Windows
	dir  string   // its own temporary folder, the binary alone in it
	bin  string
	err  error
}

// builds are the binaries built by this package's tests: the full nexus
// and the lean one (-tags lite), and both without cgo (CGO_ENABLED=0, as
// releases are built), which BenchmarkLiteStartup compares.
var builds = map[string]*build{
	"full":       {name: "nexus"},
	"lite":       {name: "nexus-lite", tags: "lite"},
	"full-nocgo": {name: "nexus", env: []string{"CGO_ENABLED=0"}},
	"lite-nocgo": {name: "nexus-lite", tags: "lite", env: []string{"CGO_ENABLED=0"}},
}

func (b *build) path(tb testing.TB) string {
	tb.Helper()
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "nexus-cmd-test-")
		if b.err != nil {
			return
		}
		// Other users may run it (tests that drop root's privileges).
		if b.err = os.Chmod(b.dir, 0o755); b.err != nil {
			return
		}
		b.bin = filepath.Join(b.dir, b.name)
		if runtime.GOOS == "windows" {
			b.bin += ".exe"
		}
		args := []string{"build", "-o", b.bin}
		if b.tags != "" {
			args = append(args, "-tags", b.tags)
		}
		cmd := exec.Command("go", append(args, ".")...)
		cmd.Env = append(os.Environ(), b.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go %v: %v\n%s", args, err, out)
		}
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.bin
}

// buildBinary returns the nexus binary, built once per test run, for
// tests and benchmarks that run it as a separate process. It is alone in
// its folder; tests must not write beside it.
func buildBinary(tb testing.TB) string { return builds["full"].path(tb) }
