package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/vault"
)

// queryReport is -query: in-process search with snippets, Nexus against
// SQLite FTS5 with snippet(), one query after the other on the same vault.
type queryReport struct {
	Queries     int     `json:"queries"`
	Rounds      int     `json:"rounds"`
	NexusP50ms  float64 `json:"nexus_p50_ms"`
	NexusP99ms  float64 `json:"nexus_p99_ms"`
	NexusCPUP50 float64 `json:"nexus_cpu_p50_ms"`
	NexusCPUP99 float64 `json:"nexus_cpu_p99_ms"`
	FTSP50ms    float64 `json:"fts5_p50_ms"`
	FTSP99ms    float64 `json:"fts5_p99_ms"`
	FTSCPUP50   float64 `json:"fts5_cpu_p50_ms"`
	FTSCPUP99   float64 `json:"fts5_cpu_p99_ms"`
	LoadAverage string  `json:"load_average"`
}

// runQuery measures in-process query latency with snippets: for each
// query of the latency mix (as the default mode's), a Nexus search with
// snippets (index.Search, limit 10) and then the FTS5 query with a
// snippet of each hit's body (snippet(), limit 10), so that both see the
// same load; each round goes over every query. Wall time and the
// process's CPU time per query. The vault in -dir must be indexed.
func runQuery(o options, log io.Writer) (*queryReport, error) {
	ctx := context.Background()
	gv, err := ensureVault(o, log)
	if err != nil {
		return nil, err
	}
	v, err := vault.Open(o.dir)
	if err != nil {
		return nil, err
	}
	ix, err := index.Open(v, index.Options{NoServe: true})
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	if err := ix.Sync(ctx); err != nil {
		return nil, err
	}
	dbPath := filepath.Join(os.TempDir(), fmt.Sprintf("nexus-bench-fts5-query-%d.db", o.notes))
	os.Remove(dbPath)
	defer os.Remove(dbPath)
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	fmt.Fprintln(log, "building the FTS5 index…")
	if err := ftsFill(db, o.dir, gv.Paths); err != nil {
		return nil, err
	}
	queries := makeQueries(gv, o.queries, o.seed)
	nexus := func(q string) error {
		_, err := ix.Search(ctx, index.Query{Text: q, Limit: 10})
		return err
	}
	fts := func(q string) error {
		rows, err := db.QueryContext(ctx, ftsSnippetSQL, ftsMatch(q))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p, s string
			if err := rows.Scan(&p, &s); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	// Both warm: the page cache, the index's caches, SQLite's.
	for _, q := range queries[:min(20, len(queries))] {
		if err := nexus(q); err != nil {
			return nil, err
		}
		if err := fts(q); err != nil {
			return nil, err
		}
	}
	runtime.GC()
	rep := &queryReport{Queries: len(queries), Rounds: 3}
	var nw, nc, fw, fc []time.Duration
	timed := func(fn func(string) error, q string, wall, cpu *[]time.Duration) error {
		c0, t0 := cpuTime(), time.Now()
		if err := fn(q); err != nil {
			return fmt.Errorf("query %q: %w", q, err)
		}
		*wall = append(*wall, time.Since(t0))
		*cpu = append(*cpu, cpuTime()-c0)
		return nil
	}
	fmt.Fprintf(log, "timing %d queries × %d rounds, interleaved…\n", len(queries), rep.Rounds)
	for range rep.Rounds {
		for _, q := range queries {
			if err := timed(nexus, q, &nw, &nc); err != nil {
				return nil, err
			}
			if err := timed(fts, q, &fw, &fc); err != nil {
				return nil, err
			}
		}
	}
	rep.NexusP50ms, rep.NexusP99ms = ms(pct(nw, 50)), ms(pct(nw, 99))
	rep.NexusCPUP50, rep.NexusCPUP99 = ms(pct(nc, 50)), ms(pct(nc, 99))
	rep.FTSP50ms, rep.FTSP99ms = ms(pct(fw, 50)), ms(pct(fw, 99))
	rep.FTSCPUP50, rep.FTSCPUP99 = ms(pct(fc, 50)), ms(pct(fc, 99))
	rep.LoadAverage = loadAverage()
	return rep, nil
}

// ftsSnippetSQL is the in-process FTS5 query with snippets: every word,
// bm25 with the title weighted 3, ten hits with a snippet of the body, as
// the sqlite3 shell's (ftsQuery).
const ftsSnippetSQL = `SELECT path, snippet(notes, 2, '**', '**', '…', 12) FROM notes WHERE notes MATCH ? ORDER BY bm25(notes, 0, 3, 1) LIMIT 10`

// ftsMatch is q as an FTS5 MATCH: every word, quoted.
func ftsMatch(q string) string {
	var s string
	for i, w := range strings.Fields(q) {
		if i > 0 {
			s += " "
		}
		s += `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
	}
	return s
}

func (r *queryReport) print(w io.Writer) {
	fmt.Fprintf(w, "in-process search with snippets, %d queries × %d rounds interleaved (load %s):\n", r.Queries, r.Rounds, r.LoadAverage)
	fmt.Fprintf(w, "  nexus:          wall p50 %6.2f ms  p99 %6.2f ms   cpu p50 %6.2f ms  p99 %6.2f ms\n", r.NexusP50ms, r.NexusP99ms, r.NexusCPUP50, r.NexusCPUP99)
	fmt.Fprintf(w, "  fts5 + snippet: wall p50 %6.2f ms  p99 %6.2f ms   cpu p50 %6.2f ms  p99 %6.2f ms\n", r.FTSP50ms, r.FTSP99ms, r.FTSCPUP50, r.FTSCPUP99)
	if r.FTSP50ms > 0 && r.FTSP99ms > 0 {
		fmt.Fprintf(w, "  nexus / fts5: wall p50 %.2fx, p99 %.2fx\n", r.NexusP50ms/r.FTSP50ms, r.NexusP99ms/r.FTSP99ms)
	}
}
