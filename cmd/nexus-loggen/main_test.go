package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run([]string{"-vault", dir, "-n", "250", "-batch", "40", "-body", "30"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "appended 250 entries") {
		t.Fatalf("output %q", out.String())
	}
	// Running again appends to the same chain.
	if err := run([]string{"-vault", dir, "-n", "10", "-start", "2026-11-20T00:00:00Z"}, &out); err != nil {
		t.Fatal(err)
	}
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := livelog.Open(v, livelog.Options{})
	r, err := l.Verify(context.Background())
	if err != nil || !r.OK(true) || r.Counts[livelog.StatusIntact] != 260 {
		t.Fatalf("verify: %v %v %+v", err, r.Counts, r.Findings)
	}
	es, _ := l.Read(livelog.ReadOptions{Last: 1})
	if len(es) != 1 || es[0].Summary != "generated entry 9" || !strings.HasPrefix(es[0].Body, "generated body text") {
		t.Fatalf("last entry %+v", es)
	}
	for _, bad := range [][]string{{}, {"-vault", dir, "-batch", "0"}, {"-vault", dir, "-start", "yesterday"}, {"-nope"}} {
		if err := run(bad, &out); err == nil {
			t.Fatalf("%v: no error", bad)
		}
	}
}
