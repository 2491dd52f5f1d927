package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// warmReport compares searches as processes while a holder keeps the
// index open: 'nexus search' (which asks the holder) against the sqlite3
// command-line shell querying an FTS5 index of the same files, one of
// each per query, interleaved so that both see the same load. Both print
// ten hits with a snippet.
type warmReport struct {
	Queries     int     `json:"queries"`
	NexusP50ms  float64 `json:"nexus_p50_ms"`
	NexusP99ms  float64 `json:"nexus_p99_ms"`
	LiteP50ms   float64 `json:"nexus_lite_p50_ms,omitempty"`
	LiteP99ms   float64 `json:"nexus_lite_p99_ms,omitempty"`
	SqliteP50ms float64 `json:"sqlite3_p50_ms"`
	SqliteP99ms float64 `json:"sqlite3_p99_ms"`
	Ratio       float64 `json:"nexus_over_sqlite3_p50"`
	LiteRatio   float64 `json:"nexus_lite_over_sqlite3_p50,omitempty"`
	SqliteVer   string  `json:"sqlite3_version"`
	LoadAverage string  `json:"load_average"`
}

// runWarm is -warm: the vault in o.dir must be indexed already. It builds
// the FTS5 index of the vault's files (as the other modes do), starts
// 'nexus index hold --idle 0' and waits until it answers, then times the
// queries.
func runWarm(o options, w io.Writer) (*warmReport, error) {
	if o.nexusBin == "" {
		return nil, fmt.Errorf("-warm needs -nexus BINARY")
	}
	sqlite3, err := exec.LookPath("sqlite3")
	if err != nil {
		return nil, fmt.Errorf("-warm needs the sqlite3 shell on PATH: %w", err)
	}
	gv, err := ensureVault(o, w)
	if err != nil {
		return nil, err
	}
	dbPath := filepath.Join(os.TempDir(), fmt.Sprintf("nexus-bench-fts5-warm-%d.db", o.notes))
	os.Remove(dbPath)
	defer os.Remove(dbPath)
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	err = ftsFill(db, o.dir, gv.Paths)
	db.Close()
	if err != nil {
		return nil, err
	}
	exec.Command(o.nexusBin, "--vault", o.dir, "index", "hold", "--stop").Run()
	hold := exec.Command(o.nexusBin, "--vault", o.dir, "index", "hold", "--idle", "0")
	if err := hold.Start(); err != nil {
		return nil, err
	}
	defer func() {
		hold.Process.Signal(os.Interrupt)
		hold.Wait()
	}()
	if err := waitHeld(o, hold.Process.Pid); err != nil {
		return nil, err
	}
	queries := makeQueries(gv, o.queries, o.seed)
	n := min(o.coldRuns, len(queries))
	ver, _ := exec.Command(sqlite3, "--version").Output()
	rep := &warmReport{Queries: n, SqliteVer: strings.Fields(string(ver) + " ?")[0]}
	env := append(os.Environ(), "NEXUS_SEARCH_HOLD=0")
	timeCmd := func(name string, args ...string) (time.Duration, error) { return timeProcess(env, name, args...) }
	var nx, lite, sq []time.Duration
	for i := -1; i < n; i++ {
		q := queries[max(i, 0)]
		a, err := timeCmd(o.nexusBin, "--vault", o.dir, "search", q)
		if err != nil {
			return nil, err
		}
		b, err := timeCmd(sqlite3, dbPath, ftsQuery(q))
		if err != nil {
			return nil, err
		}
		var c time.Duration
		if o.liteBin != "" {
			if c, err = timeCmd(o.liteBin, "--vault", o.dir, "search", q); err != nil {
				return nil, err
			}
		}
		if i >= 0 { // the first round warms the page cache
			nx, sq = append(nx, a), append(sq, b)
			if o.liteBin != "" {
				lite = append(lite, c)
			}
		}
	}
	rep.NexusP50ms, rep.NexusP99ms = ms(pct(nx, 50)), ms(pct(nx, 99))
	rep.SqliteP50ms, rep.SqliteP99ms = ms(pct(sq, 50)), ms(pct(sq, 99))
	if rep.SqliteP50ms > 0 {
		rep.Ratio = rep.NexusP50ms / rep.SqliteP50ms
	}
	if len(lite) > 0 {
		rep.LiteP50ms, rep.LiteP99ms = ms(pct(lite, 50)), ms(pct(lite, 99))
		rep.LiteRatio = rep.LiteP50ms / rep.SqliteP50ms
	}
	rep.LoadAverage = loadAverage()
	return rep, nil
}

// ftsQuery is the sqlite3 shell's statement for q: every word, quoted,
// must occur (as in the in-process FTS5 measurement), ranked by bm25 with
// the title weighted 3, ten hits with a snippet of the body.
func ftsQuery(q string) string {
	var terms []string
	for _, w := range strings.Fields(q) {
		terms = append(terms, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
	}
	match := strings.ReplaceAll(strings.Join(terms, " "), "'", "''")
	return `SELECT path, snippet(notes, 2, '**', '**', '…', 12) FROM notes WHERE notes MATCH '` + match + `' ORDER BY bm25(notes, 0, 3, 1) LIMIT 10`
}

// waitHeld waits until 'nexus index status' names pid as the holder.
func waitHeld(o options, pid int) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		out, err := exec.Command(o.nexusBin, "--vault", o.dir, "--json", "index", "status").Output()
		var st struct {
			HolderPID int `json:"holder_pid"`
		}
		if err == nil && json.Unmarshal(out, &st) == nil && st.HolderPID == pid {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("'nexus index hold' (pid %d) did not answer within 2 minutes", pid)
}

func (r *warmReport) print(w io.Writer) {
	fmt.Fprintf(w, "search processes with a holder, %d queries interleaved (load %s):\n", r.Queries, r.LoadAverage)
	fmt.Fprintf(w, "  nexus search:        p50 %.1f ms  p99 %.1f ms\n", r.NexusP50ms, r.NexusP99ms)
	if r.LiteP50ms > 0 {
		fmt.Fprintf(w, "  nexus-lite search:   p50 %.1f ms  p99 %.1f ms\n", r.LiteP50ms, r.LiteP99ms)
	}
	fmt.Fprintf(w, "  sqlite3 %s FTS5: p50 %.1f ms  p99 %.1f ms\n", r.SqliteVer, r.SqliteP50ms, r.SqliteP99ms)
	fmt.Fprintf(w, "  nexus / sqlite3 (p50): %.2f", r.Ratio)
	if r.LiteRatio > 0 {
		fmt.Fprintf(w, ", nexus-lite / sqlite3: %.2f", r.LiteRatio)
	}
	fmt.Fprintln(w)
}
