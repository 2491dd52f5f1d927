// Command nexus-bench measures Nexus search on a deterministic synthetic
// vault and compares it with SQLite FTS5 on the same files and queries in
// the same run: index build time, query latency p50/p99, planted needles
// at rank 1, Korean 2-syllable recall against a substring scan, the
// latency from a save to search while the index is watched, resident
// memory, and (with -nexus) a cold 'nexus search' process.
//
//	go run ./cmd/nexus-bench -notes 100000 -dir /tmp/nexus-bench-100k -nexus /tmp/nexus
//
// 'nexus-bench recall' measures recall instead: R@5, MRR and hit@1 of
// Nexus (words; words + alternative phrasings; words + meaning) and FTS5
// on a data set of notes and questions (docs/recall.md).
//
// Generated vaults go to /tmp (never into the repository).
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	_ "modernc.org/sqlite"

	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/index/indextest"
	"github.com/nexus-memory/nexus/vault"
)

type options struct {
	notes       int
	dir         string
	seed        uint64
	queries     int
	fts         bool
	rebuild     bool
	nexusBin    string
	saves       int
	jsonOut     bool
	cold        bool
	coldRuns    int
	builds      int
	memory      string
	firstSearch bool
	warm        bool
	liteBin     string
	query       bool
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "recall" {
		os.Exit(recallMain(os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "realvault" {
		os.Exit(realvaultMain(os.Args[2:], os.Stdout, os.Stderr))
	}
	var o options
	flag.IntVar(&o.notes, "notes", 10000, "notes in the generated vault")
	flag.StringVar(&o.dir, "dir", "", "vault folder (default /tmp/nexus-bench-N); generated if missing")
	flag.Uint64Var(&o.seed, "seed", 1, "generator seed")
	flag.IntVar(&o.queries, "queries", 300, "queries for the latency measurement")
	flag.BoolVar(&o.fts, "fts", true, "also measure SQLite FTS5 (unicode61, bm25)")
	flag.BoolVar(&o.rebuild, "rebuild", true, "rebuild the index (false: reuse it)")
	flag.StringVar(&o.nexusBin, "nexus", "", "path to a built nexus binary, to time cold 'nexus search' processes")
	flag.IntVar(&o.saves, "saves", 40, "saves for the save-to-search latency while watching")
	flag.BoolVar(&o.jsonOut, "json", false, "print the report as JSON")
	flag.BoolVar(&o.cold, "cold", false, "only compare cold 'nexus search' processes (nobody holding the index) with ripgrep on the indexed vault in -dir (needs -nexus and rg)")
	flag.IntVar(&o.coldRuns, "cold-runs", 40, "queries for -cold and -warm")
	flag.BoolVar(&o.warm, "warm", false, "only compare 'nexus search' processes while 'nexus index hold' holds the index with the sqlite3 shell querying FTS5, on the indexed vault in -dir (needs -nexus and sqlite3)")
	flag.BoolVar(&o.query, "query", false, "only compare in-process search with snippets (index.Search) with SQLite FTS5 with snippet(), query by query interleaved, wall and CPU time, on the indexed vault in -dir")
	flag.StringVar(&o.liteBin, "nexus-lite", "", "with -warm: also time this lean build's 'nexus search'")
	flag.IntVar(&o.builds, "builds", 0, "only time N builds of the vault in -dir as processes, 'nexus index rebuild' (needs -nexus) and the FTS5 build interleaved, for wall time, CPU and peak resident memory (medians)")
	flag.StringVar(&o.memory, "memory", "", "with -builds: pass --memory to 'nexus index rebuild'")
	flag.BoolVar(&o.firstSearch, "first-search", false, "with -builds: after each build pair also time 'nexus search' on the vault with its index removed (the time to a first answer, from what is indexed by then), then wait for the background holder to finish indexing")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	ftsBuildOnly := flag.Bool("fts-build-only", false, "only build the FTS5 index of -dir and exit (run as a child, for its peak memory)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: nexus-bench [flags]  (speed, against SQLite FTS5)\n       nexus-bench recall [flags]  (recall: R@5, MRR, hit@1; see nexus-bench recall -h)\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *ftsBuildOnly {
		if err := ftsBuild(o); err != nil {
			fmt.Fprintln(os.Stderr, "nexus-bench:", err)
			os.Exit(1)
		}
		return
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	if o.dir == "" {
		o.dir = fmt.Sprintf("/tmp/nexus-bench-%d", o.notes)
	}
	if o.builds > 0 {
		rep, err := runBuilds(o, os.Stderr)
		emit(o, rep, err)
		return
	}
	if o.query {
		rep, err := runQuery(o, os.Stderr)
		emit(o, rep, err)
		return
	}
	if o.warm {
		rep, err := runWarm(o, os.Stderr)
		emit(o, rep, err)
		return
	}
	if o.cold {
		rep, err := runCold(o, os.Stderr)
		emit(o, rep, err)
		return
	}
	rep, err := run(context.Background(), o, os.Stderr)
	emit(o, rep, err)
}

// emit prints a report, as JSON with -json, or the error, exiting 1.
func emit(o options, rep interface{ print(io.Writer) }, err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "nexus-bench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
	if o.jsonOut {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
		return
	}
	rep.print(os.Stdout)
}

// engineReport holds one engine's numbers.
type engineReport struct {
	BuildSeconds float64 `json:"build_seconds"`
	BuildCPU     float64 `json:"build_cpu_seconds"`
	// Build as its own process ('nexus index rebuild'; the FTS5 build
	// alone), for its peak resident memory.
	ProcBuildSeconds float64  `json:"process_build_seconds,omitempty"`
	ProcBuildCPU     float64  `json:"process_build_cpu_seconds,omitempty"`
	BuildPeakRSSMB   float64  `json:"build_peak_rss_mb,omitempty"`
	IndexBytes       int64    `json:"index_bytes"`
	QueryP50ms       float64  `json:"query_p50_ms"`
	QueryP99ms       float64  `json:"query_p99_ms"`
	NeedlesAt1       int      `json:"needles_at_1"`
	UniqueAt1        int      `json:"unique_needles_at_1"`
	CommonAt1        int      `json:"common_needles_at_1"`
	KoreanRecall     float64  `json:"korean_recall"`
	MissedNeedles    []string `json:"missed_needles,omitempty"`
}

type report struct {
	Notes         int           `json:"notes"`
	Files         int           `json:"files"`
	VaultBytes    int64         `json:"vault_bytes"`
	Documents     uint64        `json:"documents"`
	Nexus         engineReport  `json:"nexus"`
	NexusNoSnip   engineReport  `json:"nexus_no_snippets"`
	FTS5          *engineReport `json:"fts5,omitempty"`
	SaveP50ms     float64       `json:"save_visible_p50_ms"`
	SaveP95ms     float64       `json:"save_visible_p95_ms"`
	ServeRSSMB    float64       `json:"serve_rss_mb"`
	ColdP50ms     float64       `json:"cold_search_p50_ms,omitempty"`
	ColdHeldP50ms float64       `json:"cold_search_with_holder_p50_ms,omitempty"`
	ColdFirstMs   float64       `json:"cold_search_first_ms,omitempty"`
	ColdAutoP50ms float64       `json:"cold_search_auto_holder_p50_ms,omitempty"`
	GOMAXPROCS    int           `json:"gomaxprocs"`
	LoadAvg       string        `json:"load_average"`
}

func run(ctx context.Context, o options, log io.Writer) (*report, error) {
	rep := &report{Notes: o.notes, GOMAXPROCS: runtime.GOMAXPROCS(0)}
	gv, err := ensureVault(o, log)
	if err != nil {
		return nil, err
	}
	rep.Files, rep.VaultBytes = len(gv.Paths), gv.Bytes
	v, err := vault.Open(o.dir)
	if err != nil {
		return nil, err
	}
	queries := makeQueries(gv, o.queries, o.seed)
	recallNouns, truth, err := koreanTruth(o.dir, gv)
	if err != nil {
		return nil, err
	}

	// Build.
	ix, err := index.Open(v, index.Options{NoServe: true})
	if err != nil {
		return nil, err
	}
	if o.rebuild {
		fmt.Fprintf(log, "building the index of %d files…\n", len(gv.Paths))
		// As 'nexus index rebuild' does: collect garbage less often while
		// indexing.
		oldGC := debug.SetGCPercent(300)
		start, cpu0 := time.Now(), cpuTime()
		if err := ix.Rebuild(ctx, nil); err != nil {
			return nil, err
		}
		debug.SetGCPercent(oldGC)
		rep.Nexus.BuildSeconds = time.Since(start).Seconds()
		rep.Nexus.BuildCPU = (cpuTime() - cpu0).Seconds()
	} else if err := ix.Sync(ctx); err != nil {
		return nil, err
	}
	st, err := ix.Status(ctx)
	if err != nil {
		return nil, err
	}
	rep.Documents, rep.Nexus.IndexBytes = st.Documents, st.SizeBytes
	rep.NexusNoSnip.BuildSeconds, rep.NexusNoSnip.BuildCPU, rep.NexusNoSnip.IndexBytes = rep.Nexus.BuildSeconds, rep.Nexus.BuildCPU, st.SizeBytes

	// Quality and latency through the library.
	nexusSearch := func(snip bool) func(q string, limit int, prefix string) ([]string, error) {
		return func(q string, limit int, prefix string) ([]string, error) {
			res, err := ix.Search(ctx, index.Query{Text: q, Limit: limit, PathPrefix: prefix, NoSnippets: !snip})
			if err != nil {
				return nil, err
			}
			out := make([]string, len(res.Hits))
			for i, h := range res.Hits {
				out[i] = h.Path
			}
			return out, nil
		}
	}
	fmt.Fprintln(log, "measuring nexus queries…")
	if err := measure(&rep.Nexus, nexusSearch(true), queries, gv.Needles, recallNouns, truth); err != nil {
		return nil, err
	}
	if err := measure(&rep.NexusNoSnip, nexusSearch(false), queries, gv.Needles, recallNouns, truth); err != nil {
		return nil, err
	}
	ix.Close()

	// Save-to-search latency and memory while holding and watching.
	fmt.Fprintln(log, "measuring save-to-search latency while watching…")
	if err := watchLatency(ctx, v, gv, o, rep, queries); err != nil {
		return nil, err
	}

	// Rebuild as its own process, for its peak memory.
	if o.nexusBin != "" {
		fmt.Fprintln(log, "timing 'nexus index rebuild' as a process…")
		cmd := exec.Command(o.nexusBin, "--vault", o.dir, "index", "rebuild")
		cmd.Env = append(os.Environ(), "NEXUS_SEARCH_HOLD=0")
		start := time.Now()
		out, peak, err := runPeak(cmd)
		if err != nil {
			return nil, fmt.Errorf("nexus index rebuild: %v\n%s", err, out)
		}
		rep.Nexus.ProcBuildSeconds = time.Since(start).Seconds()
		rep.Nexus.ProcBuildCPU = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
		rep.Nexus.BuildPeakRSSMB = peak
	}

	// Cold processes.
	if o.nexusBin != "" {
		fmt.Fprintln(log, "timing cold nexus search processes…")
		// Nobody holding, and no background holder left behind: every
		// process opens the index and checks every file.
		rep.ColdP50ms, err = coldSearch(o, queries, []string{"NEXUS_SEARCH_HOLD=0"})
		if err != nil {
			return nil, err
		}
		// As a user runs it: the first search leaves a background holder
		// ('nexus index hold'), the next ones ask it.
		rep.ColdFirstMs, rep.ColdAutoP50ms, err = coldSearchAutoHold(o, queries)
		if err != nil {
			return nil, err
		}
		hv, _ := vault.Open(o.dir)
		holder, err := index.Open(hv, index.Options{})
		if err != nil {
			return nil, err
		}
		hctx, cancel := context.WithCancel(ctx)
		if err := holder.Start(hctx); err != nil {
			cancel()
			return nil, err
		}
		rep.ColdHeldP50ms, err = coldSearch(o, queries, nil)
		cancel()
		holder.Close()
		if err != nil {
			return nil, err
		}
	}

	if o.fts {
		fmt.Fprintln(log, "building and measuring SQLite FTS5…")
		var fr engineReport
		if err := fts5(ctx, o, gv, &fr, queries, recallNouns, truth); err != nil {
			return nil, err
		}
		// The same build alone in a child process, for its peak memory.
		if exe, err := os.Executable(); err == nil {
			cmd := exec.Command(exe, "-fts-build-only", "-dir", o.dir, "-notes", fmt.Sprint(o.notes))
			start := time.Now()
			out, peak, err := runPeak(cmd)
			if err != nil {
				return nil, fmt.Errorf("fts5 build process: %v\n%s", err, out)
			}
			fr.ProcBuildSeconds = time.Since(start).Seconds()
			fr.ProcBuildCPU = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
			fr.BuildPeakRSSMB = peak
		}
		rep.FTS5 = &fr
	}
	rep.LoadAvg = loadAverage()
	return rep, nil
}

// ensureVault generates the vault unless the folder already holds one
// made with the same options.
func ensureVault(o options, log io.Writer) (*indextest.Vault, error) {
	meta := filepath.Join(o.dir, ".nexus", "bench.json")
	want := fmt.Sprintf("notes=%d seed=%d", o.notes, o.seed)
	var saved struct {
		Key   string
		Vault indextest.Vault
	}
	if data, err := os.ReadFile(meta); err == nil && json.Unmarshal(data, &saved) == nil && saved.Key == want {
		return &saved.Vault, nil
	}
	if !strings.HasPrefix(filepath.Clean(o.dir), os.TempDir()) && os.Getenv("NEXUS_BENCH_ANY_DIR") == "" {
		return nil, fmt.Errorf("refusing to generate outside %s (set NEXUS_BENCH_ANY_DIR=1)", os.TempDir())
	}
	fmt.Fprintf(log, "generating %d notes in %s…\n", o.notes, o.dir)
	os.RemoveAll(o.dir)
	if _, _, err := vault.Init(o.dir); err != nil {
		return nil, err
	}
	gv, err := indextest.Generate(o.dir, indextest.Options{Notes: o.notes, Seed: o.seed, Needles: true})
	if err != nil {
		return nil, err
	}
	saved.Key, saved.Vault = want, *gv
	data, _ := json.Marshal(saved)
	return gv, os.WriteFile(meta, data, 0o644)
}

// makeQueries builds the latency query mix: 1-3 common English words,
// Korean nouns, and the needles.
func makeQueries(gv *indextest.Vault, n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 99))
	words := strings.Fields("deploy server staging port backup restore error timeout cache queue release review incident latency database index search config access token certificate migration schedule budget customer invoice dashboard alert metric cluster node replica")
	var qs []string
	for _, nd := range gv.Needles {
		qs = append(qs, nd.Query)
	}
	for len(qs) < n {
		switch k := r.IntN(10); {
		case k < 7:
			m := 1 + r.IntN(3)
			var ws []string
			for i := 0; i < m; i++ {
				ws = append(ws, words[r.IntN(len(words))])
			}
			qs = append(qs, strings.Join(ws, " "))
		default:
			qs = append(qs, gv.KoreanNouns[r.IntN(len(gv.KoreanNouns))])
		}
	}
	return qs
}

// recallPrefix limits the recall measurement to a slice of the vault so
// that every true match fits in one result page.
const recallPrefix = "notes/infra/0"

// koreanTruth lists, for each 2-syllable Korean noun, the files under
// recallPrefix whose text holds it (a plain substring scan).
func koreanTruth(dir string, gv *indextest.Vault) ([]string, map[string]map[string]bool, error) {
	nouns := gv.KoreanNouns
	if len(nouns) > 25 {
		nouns = nouns[:25]
	}
	truth := map[string]map[string]bool{}
	for _, n := range nouns {
		truth[n] = map[string]bool{}
	}
	for _, p := range gv.Paths {
		if !strings.HasPrefix(p, recallPrefix) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			return nil, nil, err
		}
		for _, n := range nouns {
			if strings.Contains(string(data), n) {
				truth[n][p] = true
			}
		}
	}
	return nouns, truth, nil
}

type searchFunc func(q string, limit int, prefix string) ([]string, error)

func measure(er *engineReport, search searchFunc, queries []string, needles []indextest.Needle, nouns []string, truth map[string]map[string]bool) error {
	// Warm up, then time every query.
	for _, q := range queries[:min(20, len(queries))] {
		if _, err := search(q, 10, ""); err != nil {
			return err
		}
	}
	lat := make([]time.Duration, 0, len(queries))
	for _, q := range queries {
		start := time.Now()
		if _, err := search(q, 10, ""); err != nil {
			return fmt.Errorf("query %q: %w", q, err)
		}
		lat = append(lat, time.Since(start))
	}
	er.QueryP50ms, er.QueryP99ms = ms(pct(lat, 50)), ms(pct(lat, 99))
	for _, nd := range needles {
		hits, err := search(nd.Query, 1, "")
		if err != nil {
			return err
		}
		if len(hits) > 0 && hits[0] == nd.Path {
			er.NeedlesAt1++
			if nd.Common {
				er.CommonAt1++
			} else {
				er.UniqueAt1++
			}
		} else {
			er.MissedNeedles = append(er.MissedNeedles, nd.Query)
		}
	}
	found, want := 0, 0
	for _, n := range nouns {
		hits, err := search(n, 10000, recallPrefix)
		if err != nil {
			return err
		}
		got := map[string]bool{}
		for _, h := range hits {
			got[h] = true
		}
		for p := range truth[n] {
			want++
			if got[p] {
				found++
			}
		}
	}
	if want > 0 {
		er.KoreanRecall = float64(found) / float64(want)
	}
	return nil
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return s[i]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// watchLatency holds the index with its watcher running, saves notes the
// way Obsidian does (truncate, then write) and times until a search finds
// the new word. It also reads the holder's resident memory after queries.
func watchLatency(ctx context.Context, v *vault.Vault, gv *indextest.Vault, o options, rep *report, queries []string) error {
	ix, err := index.Open(v, index.Options{NoServe: true, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		return err
	}
	defer ix.Close()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := ix.Start(wctx); err != nil {
		return err
	}
	for _, q := range queries {
		ix.Search(ctx, index.Query{Text: q})
	}
	runtime.GC()
	rep.ServeRSSMB = rssMB()
	r := rand.New(rand.NewPCG(o.seed, 7))
	var lat []time.Duration
	for i := 0; i < o.saves; i++ {
		p := gv.Paths[r.IntN(len(gv.Paths))]
		if strings.HasPrefix(p, "log/") {
			continue
		}
		abs := filepath.Join(o.dir, filepath.FromSlash(p))
		old, err := os.ReadFile(abs)
		if err != nil {
			return err
		}
		word := fmt.Sprintf("savedword%dx%d", i, r.IntN(1e6))
		f, err := os.OpenFile(abs, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return err
		}
		start := time.Now()
		f.Write(old)
		f.WriteString("\n" + word + "\n")
		f.Close()
		ver := ix.Version()
		deadline, dcancel := context.WithTimeout(ctx, 30*time.Second)
		for {
			res, err := ix.Search(deadline, index.Query{Text: word, Limit: 1, NoSnippets: true})
			if err == nil && len(res.Hits) > 0 {
				break
			}
			if ver, err = ix.Wait(deadline, ver); err != nil {
				dcancel()
				return fmt.Errorf("save of %s never became visible: %w", p, err)
			}
		}
		dcancel()
		lat = append(lat, time.Since(start))
		// Put the note back as it was (the vault is reused).
		if err := os.WriteFile(abs, old, 0o644); err != nil {
			return err
		}
	}
	rep.SaveP50ms, rep.SaveP95ms = ms(pct(lat, 50)), ms(pct(lat, 95))
	return ix.Sync(ctx)
}

func rssMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l, "VmRSS:")), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}

// coldSearch runs 'nexus search' as a new process for some queries and
// returns the median wall time.
func coldSearch(o options, queries []string, env []string) (float64, error) {
	var lat []time.Duration
	for i, q := range queries[:min(30, len(queries))] {
		cmd := exec.Command(o.nexusBin, "--vault", o.dir, "--json", "search", q)
		cmd.Env = append(os.Environ(), env...)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("nexus search %q: %v: %s", q, err, out)
		}
		if i > 0 { // the first one warms the page cache
			lat = append(lat, time.Since(start))
		}
	}
	return ms(pct(lat, 50)), nil
}

// coldSearchAutoHold times 'nexus search' processes with the default
// background holder: the first search (which checks every file and starts
// the holder), then, once the holder answers, the next ones. The holder is
// stopped afterwards.
func coldSearchAutoHold(o options, queries []string) (first, p50 float64, err error) {
	qs := queries[:min(30, len(queries))]
	search := func(q string) (time.Duration, error) {
		// Not from a terminal, so the holder must be asked for (as
		// search.hold in config.yaml would).
		cmd := exec.Command(o.nexusBin, "--vault", o.dir, "--json", "search", "--hold", "10m", q)
		cmd.Env = append(os.Environ(), "NEXUS_SEARCH_HOLD=")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("nexus search %q: %v: %s", q, err, out)
		}
		return time.Since(start), nil
	}
	d, err := search(qs[0])
	if err != nil {
		return 0, 0, err
	}
	first = ms(d)
	v, err := vault.Open(o.dir)
	if err != nil {
		return 0, 0, err
	}
	var pid int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ix, err := index.Open(v, index.Options{NoServe: true, OpenTimeout: 50 * time.Millisecond})
		if err == nil {
			remote := ix.Remote()
			pid = ix.HolderPID()
			ix.Close()
			if remote {
				break
			}
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("no background holder after the first search")
		}
	}
	defer func() {
		// Stop it as Ctrl-C would, and wait until the index is free.
		if p, err := os.FindProcess(pid); err == nil && p.Signal(os.Interrupt) != nil {
			p.Kill()
		}
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			ix, err := index.Open(v, index.Options{NoServe: true, OpenTimeout: 50 * time.Millisecond})
			if err == nil {
				local := !ix.Remote()
				ix.Close()
				if local {
					return
				}
			}
		}
	}()
	var lat []time.Duration
	for _, q := range qs[1:] {
		d, err := search(q)
		if err != nil {
			return 0, 0, err
		}
		lat = append(lat, d)
	}
	return first, ms(pct(lat, 50)), nil
}

// fts5 indexes the same files in SQLite FTS5 (unicode61 tokenizer, bm25)
// and measures the same things.
// ftsBuild builds the FTS5 index of o.dir's notes alone (the child
// process of -fts-build-only).
func ftsBuild(o options) error {
	var paths []string
	err := filepath.WalkDir(o.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != o.dir {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(o.dir, p)
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return err
	}
	dbPath := filepath.Join(os.TempDir(), fmt.Sprintf("nexus-bench-fts5-child-%d.db", o.notes))
	os.Remove(dbPath)
	defer os.Remove(dbPath)
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	return ftsFill(db, o.dir, paths)
}

func fts5(ctx context.Context, o options, gv *indextest.Vault, er *engineReport, queries []string, nouns []string, truth map[string]map[string]bool) error {
	dbPath := filepath.Join(os.TempDir(), fmt.Sprintf("nexus-bench-fts5-%d.db", o.notes))
	os.Remove(dbPath)
	defer os.Remove(dbPath)
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	start, cpu0 := time.Now(), cpuTime()
	if err := ftsFill(db, o.dir, gv.Paths); err != nil {
		return err
	}
	er.BuildSeconds = time.Since(start).Seconds()
	er.BuildCPU = (cpuTime() - cpu0).Seconds()
	if st, err := os.Stat(dbPath); err == nil {
		er.IndexBytes = st.Size()
	}
	return ftsMeasure(ctx, db, er, queries, gv, nouns, truth)
}

// ftsFill creates the FTS5 table and inserts the notes.
func ftsFill(db *sql.DB, dir string, paths []string) error {
	if _, err := db.Exec(`PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; CREATE VIRTUAL TABLE notes USING fts5(path UNINDEXED, title, body, tokenize='unicode61')`); err != nil {
		return err
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	ins, err := tx.Prepare(`INSERT INTO notes(path, title, body) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	for _, p := range paths {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			return err
		}
		title := strings.TrimSuffix(filepath.Base(p), ".md")
		if _, err := ins.Exec(p, title, string(data)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func ftsMeasure(ctx context.Context, db *sql.DB, er *engineReport, queries []string, gv *indextest.Vault, nouns []string, truth map[string]map[string]bool) error {
	search := func(q string, limit int, prefix string) ([]string, error) {
		var terms []string
		for _, w := range strings.Fields(q) {
			terms = append(terms, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
		}
		sqlq := `SELECT path FROM notes WHERE notes MATCH ? ORDER BY bm25(notes, 0, 3, 1) LIMIT ?`
		args := []any{strings.Join(terms, " "), limit}
		if prefix != "" {
			sqlq = `SELECT path FROM notes WHERE notes MATCH ? AND path LIKE ? ORDER BY bm25(notes, 0, 3, 1) LIMIT ?`
			args = []any{strings.Join(terms, " "), prefix + "%", limit}
		}
		rows, err := db.QueryContext(ctx, sqlq, args...)
		if err != nil {
			return nil, err
		}
		return scanPaths(rows)
	}
	return measure(er, search, queries, gv.Needles, nouns, truth)
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "vault: %d notes, %d files, %.0f MB of markdown, %d search documents (GOMAXPROCS=%d, load average at the end %s)\n", r.Notes, r.Files, float64(r.VaultBytes)/1e6, r.Documents, r.GOMAXPROCS, r.LoadAvg)
	row := func(name string, e *engineReport) {
		fmt.Fprintf(w, "%-22s build %7.1fs (cpu %6.1fs)  index %7.1f MB  p50 %7.2fms  p99 %7.2fms  needles@1 %2d/20 (unique %d/10, common %d/10)  korean recall %5.1f%%\n",
			name, e.BuildSeconds, e.BuildCPU, float64(e.IndexBytes)/1e6, e.QueryP50ms, e.QueryP99ms, e.NeedlesAt1, e.UniqueAt1, e.CommonAt1, 100*e.KoreanRecall)
		if len(e.MissedNeedles) > 0 {
			fmt.Fprintf(w, "%-22s missed: %q\n", "", e.MissedNeedles)
		}
	}
	row("nexus (with snippets)", &r.Nexus)
	row("nexus (no snippets)", &r.NexusNoSnip)
	if r.FTS5 != nil {
		row("sqlite fts5", r.FTS5)
		f := r.FTS5
		ratio := func(a, b float64) string {
			if b == 0 {
				return "n/a"
			}
			return fmt.Sprintf("%.2fx", a/b)
		}
		fmt.Fprintf(w, "ratios nexus/fts5: build %s, p50 %s, p99 %s (no snippets: p50 %s, p99 %s), needles %d vs %d, korean recall %.1f%% vs %.1f%%\n",
			ratio(r.Nexus.BuildSeconds, f.BuildSeconds), ratio(r.Nexus.QueryP50ms, f.QueryP50ms), ratio(r.Nexus.QueryP99ms, f.QueryP99ms),
			ratio(r.NexusNoSnip.QueryP50ms, f.QueryP50ms), ratio(r.NexusNoSnip.QueryP99ms, f.QueryP99ms),
			r.Nexus.NeedlesAt1, f.NeedlesAt1, 100*r.Nexus.KoreanRecall, 100*f.KoreanRecall)
	}
	if r.Nexus.BuildPeakRSSMB > 0 {
		line := fmt.Sprintf("build as a process: nexus index rebuild %.1fs (cpu %.1fs), peak RSS %.0f MB", r.Nexus.ProcBuildSeconds, r.Nexus.ProcBuildCPU, r.Nexus.BuildPeakRSSMB)
		if f := r.FTS5; f != nil && f.BuildPeakRSSMB > 0 {
			line += fmt.Sprintf("; fts5 %.1fs (cpu %.1fs), peak RSS %.0f MB; ratios: time %.2fx, cpu %.2fx, peak RSS %.2fx",
				f.ProcBuildSeconds, f.ProcBuildCPU, f.BuildPeakRSSMB, r.Nexus.ProcBuildSeconds/f.ProcBuildSeconds, r.Nexus.ProcBuildCPU/f.ProcBuildCPU, r.Nexus.BuildPeakRSSMB/f.BuildPeakRSSMB)
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "save visible in search while watching: p50 %.0fms, p95 %.0fms\n", r.SaveP50ms, r.SaveP95ms)
	fmt.Fprintf(w, "holder process resident memory: %.0f MB\n", r.ServeRSSMB)
	if r.ColdP50ms > 0 {
		fmt.Fprintf(w, "cold 'nexus search' process: p50 %.0fms with nobody holding the index and --hold 0 (checks every file first), %.0fms while 'nexus watch' runs\n", r.ColdP50ms, r.ColdHeldP50ms)
		fmt.Fprintf(w, "cold 'nexus search' process as installed: first %.0fms (starts the background holder), then p50 %.0fms\n", r.ColdFirstMs, r.ColdAutoP50ms)
	}
}

// scanPaths reads the path column of every row of an FTS5 query, in order,
// and closes rows.
func scanPaths(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
