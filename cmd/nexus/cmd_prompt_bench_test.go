package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkPromptColdProcess measures 'nexus prompt' as a cold process: it
// builds the binary once, makes a vault with 10 agents (each with a full
// MEMORY.md and USER.md and a few live-log entries), then execs
// 'nexus --agent agentN prompt' and reports the p50 and p99 wall time per
// process.
//
//	go test ./cmd/nexus/ -run '^$' -bench BenchmarkPromptColdProcess -benchtime 200x
func BenchmarkPromptColdProcess(b *testing.B) {
	bin := buildBinary(b)
	dir := b.TempDir()
	runOK := func(args ...string) {
		b.Helper()
		var out, errb strings.Builder
		if code := run(b.Context(), args, strings.NewReader(""), &out, &errb); code != 0 {
			b.Fatalf("nexus %v: %s", args, errb.String())
		}
	}
	runOK("init", dir)
	for a := range 10 {
		name := fmt.Sprintf("agent%d", a)
		runOK("--vault", dir, "agent", "add", name, "--role", "bench agent")
		for i := range 15 {
			runOK("--vault", dir, "--agent", name, "memory", "add", fmt.Sprintf("note %02d of %s: staging host 10.0.1.%d uses port 22%02d; ask ella first.", i, name, i, i))
		}
		for i := range 10 {
			runOK("--vault", dir, "--agent", name, "memory", "add", "--target", "user", fmt.Sprintf("preference %02d: concise answers, Korean ok (사용자 선호 %d)", i, i))
		}
		runOK("--vault", dir, "--agent", name, "log", "append", fmt.Sprintf("%s finished the nightly deploy", name))
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		cmd := exec.Command(bin, "--vault", dir, "--agent", fmt.Sprintf("agent%d", i%10), "prompt")
		cmd.Env = append(os.Environ(), "NEXUS_VAULT=", "NEXUS_AGENT=")
		start := time.Now()
		out, err := cmd.Output()
		lat = append(lat, time.Since(start))
		if err != nil || !strings.Contains(string(out), "MEMORY (your personal notes)") {
			b.Fatalf("prompt: %v\n%s", err, out)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
