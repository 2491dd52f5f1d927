//go:build !lite

package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/index"
)

func TestParseBytes(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"256MiB", 256 << 20, true},
		{"1GiB", 1 << 30, true},
		{"1gb", 1 << 30, true},
		{"512 MB", 512 << 20, true},
		{"64m", 64 << 20, true},
		{"1024", 1024, true},
		{"2KiB", 2048, true},
		{"", 0, false},
		{"lots", 0, false},
		{"-5MiB", 0, false},
		{"1.5GiB", 0, false},
		{"99999999999GiB", 0, false},
	} {
		got, err := parseBytes(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestRebuildMemoryFlag(t *testing.T) {
	dir := searchVault(t)
	if code, _, stderr := searchCLI(t, nil, "--vault", dir, "index", "rebuild", "--memory", "1MiB"); code != 2 || !strings.Contains(stderr, "--memory") {
		t.Fatalf("--memory 1MiB: exit %d, %s", code, stderr)
	}
	if code, out, stderr := searchCLI(t, nil, "--vault", dir, "index", "rebuild", "--memory", "64MiB"); code != 0 || !strings.Contains(out, "Indexed 4 files") {
		t.Fatalf("--memory 64MiB: exit %d, %s %s", code, out, stderr)
	}
}

// TestProgressRate: the progress lines tell the rate and the time left
// once a second has passed.
func TestProgressRate(t *testing.T) {
	var b bytes.Buffer
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	bar := newProgressBar(&b)
	bar.now = func() time.Time { return now }
	bar.update(index.Progress{Done: 0, Total: 1000})
	now = now.Add(2 * time.Second)
	bar.update(index.Progress{Done: 200, Total: 1000})
	now = now.Add(6 * time.Second)
	bar.update(index.Progress{Done: 1000, Total: 1000, Merging: true})
	now = now.Add(2 * time.Second)
	bar.update(index.Progress{Done: 1000, Total: 1000})
	bar.done()
	want := "indexing: 0/1000 files (0%)\nindexing: 200/1000 files (20%), 100 files/s, about 8s left\n" +
		"indexing: all 1000 files analysed, merging the index, 125 files/s\n" +
		"indexing: 1000/1000 files (100%), 100 files/s\n"
	if b.String() != want {
		t.Fatalf("progress:\n%s\nwant:\n%s", b.String(), want)
	}
}
