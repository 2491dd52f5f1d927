//go:build !lite

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/index"
)

// TestPlainProgressHasNoControlCharacters: where the bar is not redrawn,
// every update is a whole line with no carriage return or escape.
func TestPlainProgressHasNoControlCharacters(t *testing.T) {
	var out strings.Builder
	at := time.Unix(0, 0)
	b := &progressBar{w: &out, lastPct: -1, now: func() time.Time { return at }}
	for i := 0; i <= 20; i++ {
		at = at.Add(time.Second)
		b.update(index.Progress{Done: i * 5, Total: 100})
	}
	b.update(index.Progress{Done: 100, Total: 100, Merging: true})
	b.done()
	got := out.String()
	if strings.ContainsAny(got, "\r\x1b") || !strings.HasSuffix(got, "\n") || strings.Count(got, "\n") != 12 {
		t.Errorf("plain progress:\n%q", got)
	}
}
