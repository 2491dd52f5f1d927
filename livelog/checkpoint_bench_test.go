package livelog

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkCheckpointSaveVsAppend puts a checkpoint save next to a durable
// log append, in one process (issue 33: checkpoint_save within 2x
// log_append's p50). Run:
//
//	go test ./livelog -run '^$' -bench CheckpointSaveVsAppend -benchtime 400x
func BenchmarkCheckpointSaveVsAppend(b *testing.B) {
	for _, tool := range []string{"append", "checkpoint"} {
		b.Run(tool, func(b *testing.B) {
			v := mustVault(b)
			l := mustLog(b, v)
			now := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
			var lat []time.Duration
			i := 0
			for b.Loop() {
				i++
				t := time.Now()
				var err error
				if tool == "append" {
					_, err = l.Append("lyra", Entry{Channel: "bench", Kind: "note", Summary: fmt.Sprintf("step %d done", i)})
				} else {
					_, err = SaveCheckpoint(v, "lyra", Checkpoint{Task: "ship the gateway", State: fmt.Sprintf("step %d done", i), Next: "deploy", Files: []string{"cmd/gateway/main.go"}}, now.Add(time.Duration(i)*time.Second))
				}
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		})
	}
}
