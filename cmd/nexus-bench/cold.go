package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// coldReport compares cold processes on the same vault and queries, run
// interleaved (one of each per query) so that both see the same load:
// 'nexus search' with nobody holding the index (it checks every file
// before answering), ripgrep listing the files that hold the query's
// words, and the process start-up floors.
type coldReport struct {
	Queries     int     `json:"queries"`
	NexusP50ms  float64 `json:"nexus_p50_ms"`
	NexusP99ms  float64 `json:"nexus_p99_ms"`
	RgP50ms     float64 `json:"rg_p50_ms"`
	RgP99ms     float64 `json:"rg_p99_ms"`
	Ratio       float64 `json:"nexus_over_rg_p50"`
	HelpP50ms   float64 `json:"nexus_help_p50_ms"`
	TrueP50ms   float64 `json:"true_p50_ms"`
	RgVersion   string  `json:"rg_version"`
	LoadAverage string  `json:"load_average"`
}

// runCold is -cold: the vault in o.dir must be indexed already (run the
// full bench once). ripgrep is given every word of a query as a fixed,
// case-insensitive pattern (-l -i -F -e W...): one pass over the files,
// the least a search without an index can do.
func runCold(o options, w io.Writer) (*coldReport, error) {
	if o.nexusBin == "" {
		return nil, fmt.Errorf("-cold needs -nexus BINARY")
	}
	rg, err := exec.LookPath("rg")
	if err != nil {
		return nil, fmt.Errorf("-cold needs ripgrep (rg) on PATH: %w", err)
	}
	gv, err := ensureVault(o, w)
	if err != nil {
		return nil, err
	}
	queries := makeQueries(gv, o.queries, o.seed)
	n := min(o.coldRuns, len(queries))
	ver, _ := exec.Command(rg, "--version").Output()
	rep := &coldReport{Queries: n, RgVersion: strings.SplitN(string(ver), "\n", 2)[0]}
	env := append(os.Environ(), "NEXUS_SEARCH_HOLD=0")
	// Nobody may hold the index: stop a background holder a previous run
	// left.
	exec.Command(o.nexusBin, "--vault", o.dir, "index", "hold", "--stop").Run()
	timeCmd := func(name string, args ...string) (time.Duration, error) { return timeProcess(env, name, args...) }
	var nx, rgs, help, tru []time.Duration
	for i := -1; i < n; i++ {
		q := queries[max(i, 0)]
		rgArgs := []string{"-l", "-i", "-F"}
		for _, word := range strings.Fields(q) {
			rgArgs = append(rgArgs, "-e", word)
		}
		rgArgs = append(rgArgs, o.dir)
		a, err := timeCmd(o.nexusBin, "--vault", o.dir, "--json", "search", "--hold", "0", q)
		if err != nil {
			return nil, err
		}
		b, err := timeCmd(rg, rgArgs...)
		if err != nil {
			return nil, err
		}
		c, err := timeCmd(o.nexusBin, "--help")
		if err != nil {
			return nil, err
		}
		d, err := timeCmd("true")
		if err != nil {
			return nil, err
		}
		if i >= 0 { // the first round warms the page cache
			nx, rgs, help, tru = append(nx, a), append(rgs, b), append(help, c), append(tru, d)
		}
	}
	rep.NexusP50ms, rep.NexusP99ms = ms(pct(nx, 50)), ms(pct(nx, 99))
	rep.RgP50ms, rep.RgP99ms = ms(pct(rgs, 50)), ms(pct(rgs, 99))
	rep.HelpP50ms, rep.TrueP50ms = ms(pct(help, 50)), ms(pct(tru, 50))
	if rep.RgP50ms > 0 {
		rep.Ratio = rep.NexusP50ms / rep.RgP50ms
	}
	rep.LoadAverage = loadAverage()
	return rep, nil
}

// timeProcess runs name with args and env to its end and returns its wall
// time. Exit code 1 is not a failure (ripgrep and grep-likes: no match).
func timeProcess(env []string, name string, args ...string) (time.Duration, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			return 0, fmt.Errorf("%s %v: %v: %s", name, args, err, out)
		}
	}
	return d, nil
}

func (r *coldReport) print(w io.Writer) {
	fmt.Fprintf(w, "cold processes, %d queries interleaved (load %s):\n", r.Queries, r.LoadAverage)
	fmt.Fprintf(w, "  nexus search, nobody holding: p50 %.1f ms  p99 %.1f ms\n", r.NexusP50ms, r.NexusP99ms)
	fmt.Fprintf(w, "  %s -l -i -F:     p50 %.1f ms  p99 %.1f ms\n", r.RgVersion, r.RgP50ms, r.RgP99ms)
	fmt.Fprintf(w, "  nexus / rg (p50): %.2f\n", r.Ratio)
	fmt.Fprintf(w, "  floors: nexus --help p50 %.1f ms, true p50 %.1f ms\n", r.HelpP50ms, r.TrueP50ms)
}
