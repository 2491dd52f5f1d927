package mcpserver_test

import (
	"fmt"
	"testing"
)

// BenchmarkStdioCheckpointSaveVsLogAppend puts checkpoint_save next to
// log_append over MCP, one spawned 'nexus serve --stdio' each (issue 33:
// checkpoint_save's p50 within 2x log_append's). The history grows past
// checkpoint_history_keep during the run, so archiving is in the numbers.
// Run:
//
//	go test ./mcpserver -run '^$' -bench CheckpointSaveVsLogAppend -benchtime 300x
func BenchmarkStdioCheckpointSaveVsLogAppend(b *testing.B) {
	for _, tool := range []string{"log_append", "checkpoint_save"} {
		b.Run(tool, func(b *testing.B) {
			v := mustVault(b, "lyra")
			cs := connectStdio(b, v, "lyra", nil)
			args := func(i int) map[string]any {
				if tool == "log_append" {
					return map[string]any{"summary": fmt.Sprintf("step %d done", i), "channel": "bench"}
				}
				return map[string]any{"task": "ship the gateway", "state": fmt.Sprintf("step %d done", i), "next": "deploy", "files": []string{"cmd/gateway/main.go"}}
			}
			timedCall(b, cs, tool, args(0))
			lat := make(latencies, 0, b.N)
			i := 0
			for b.Loop() {
				i++
				lat = append(lat, timedCall(b, cs, tool, args(i)))
			}
			lat.report(b)
		})
	}
}

// BenchmarkInProcessCheckpointSaveVsLogAppend is the same comparison with
// the server in the benchmark's process over HTTP, so -cpuprofile sees the
// server's side of each call:
//
//	go test ./mcpserver -run '^$' -bench InProcessCheckpointSaveVsLogAppend -benchtime 300x -cpuprofile /tmp/cp.out
func BenchmarkInProcessCheckpointSaveVsLogAppend(b *testing.B) {
	for _, tool := range []string{"log_append", "checkpoint_save"} {
		b.Run(tool, func(b *testing.B) {
			v := mustVault(b, "lyra")
			_, url, tokens := startServer(b, v, "lyra")
			cs := connectHTTP(b, url, tokens["lyra"], "", nil)
			args := func(i int) map[string]any {
				if tool == "log_append" {
					return map[string]any{"summary": fmt.Sprintf("step %d done", i), "channel": "bench"}
				}
				return map[string]any{"task": "ship the gateway", "state": fmt.Sprintf("step %d done", i), "next": "deploy", "files": []string{"cmd/gateway/main.go"}}
			}
			timedCall(b, cs, tool, args(0))
			lat := make(latencies, 0, b.N)
			i := 0
			for b.Loop() {
				i++
				lat = append(lat, timedCall(b, cs, tool, args(i)))
			}
			lat.report(b)
		})
	}
}
