package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run([]string{"-vault", dir, "-n", "250", "-batch", "40", "-body", "30", "-feeds", "3", "-device", "gen"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "appended 250 entries in 3 feeds (lyra,ella,mallory@gen)") {
		t.Fatalf("output %q", out.String())
	}
	// Running again appends to the same feeds.
	if err := run([]string{"-vault", dir, "-n", "10", "-feeds", "3", "-start", "2026-11-20T00:00:00Z"}, &out); err != nil {
		t.Fatal(err)
	}
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The feeds layout: one file per writer in the month folder.
	files, _ := filepath.Glob(filepath.Join(dir, "log", "live", "2026-11", "*.md"))
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	sort.Strings(names)
	if strings.Join(names, " ") != "ella@gen.md lyra@gen.md mallory@gen.md" {
		t.Fatalf("feed files %v", names)
	}
	if _, err := os.Stat(filepath.Join(dir, "log", "live", "2026-11.md")); err == nil {
		t.Fatal("an older single-file segment was written")
	}
	l, _ := livelog.Open(v, livelog.Options{})
	r, err := l.Verify(context.Background())
	if err != nil || !r.OK(true) || r.Counts[livelog.StatusIntact] != 260 {
		t.Fatalf("verify: %v %v %+v", err, r.Counts, r.Findings)
	}
	feeds, err := l.Feeds(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	cited := 0
	for _, f := range feeds {
		if f.Log == "live" {
			counts[f.Writer] = f.Entries
			cited += len(f.CitedBy)
		}
	}
	// 84 + 83 + 83, then 4 + 3 + 3.
	if counts["lyra@gen"] != 88 || counts["ella@gen"] != 86 || counts["mallory@gen"] != 86 {
		t.Fatalf("entries per feed %v", counts)
	}
	if cited == 0 {
		t.Fatal("no feed cites another: batches must cite the heads they saw, as appends do")
	}
	es, _ := l.Read(livelog.ReadOptions{Last: 1, From: "lyra"})
	if len(es) != 1 || es[0].Summary != "generated entry 3 of lyra" || !strings.HasPrefix(es[0].Body, "generated body text") || es[0].Writer != "lyra@gen" {
		t.Fatalf("last entry %+v", es)
	}
	if err := run([]string{"-vault", dir, "-n", "4", "-agents", "zed,quinn"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "in 2 feeds (zed,quinn@gen)") {
		t.Fatalf("output %q", out.String())
	}
	for _, bad := range [][]string{{}, {"-vault", dir, "-batch", "0"}, {"-vault", dir, "-feeds", "0"}, {"-vault", dir, "-start", "yesterday"}, {"-vault", dir, "-device", "Not A/Name"}, {"-nope"}} {
		if err := run(bad, &out); err == nil {
			t.Fatalf("%v: no error", bad)
		}
	}
}
