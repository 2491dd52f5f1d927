package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// buildRun is one build as a process.
type buildRun struct {
	Seconds float64 `json:"seconds"`
	CPU     float64 `json:"cpu_seconds"`
	PeakMB  float64 `json:"peak_rss_mb"`
	AnonMB  float64 `json:"peak_anon_mb,omitempty"` // largest RssAnon sampled: the peak without mapped files
	Load    string  `json:"load_average"`
}

// buildsReport compares 'nexus index rebuild' with the FTS5 build of the
// same files, each as its own process, run alternately.
type buildsReport struct {
	Memory string     `json:"memory,omitempty"`
	Nexus  []buildRun `json:"nexus"`
	FTS5   []buildRun `json:"fts5"`
	// First are the first searches with no index (-first-search).
	First []firstSearch `json:"first_search,omitempty"`
}

// firstSearch is one 'nexus search' on a vault whose index was removed:
// its process, how many of the files it had indexed when it answered,
// and how long the background holder then took to index the rest.
type firstSearch struct {
	buildRun
	Indexed    int     `json:"indexed"` // files indexed when it answered (all of them: Total)
	Total      int     `json:"total"`
	RestSecond float64 `json:"rest_seconds"` // until the holder finished
}

// firstSearchRe is what 'nexus search' says on stderr when it answered
// before every file was indexed.
var firstSearchRe = regexp.MustCompile(`from (\d+) of (\d+) changed files`)

// timeFirstSearch removes o.dir's index and times 'nexus search' there,
// then waits for the holder it started to finish indexing.
func timeFirstSearch(o options, timed func(*exec.Cmd) (buildRun, []byte, error)) (firstSearch, error) {
	exec.Command(o.nexusBin, "--vault", o.dir, "index", "hold", "--stop").Run()
	if err := os.RemoveAll(filepath.Join(o.dir, ".nexus", "index")); err != nil {
		return firstSearch{}, err
	}
	// --hold overrides the NEXUS_SEARCH_HOLD=0 timed sets: with a
	// holder to leave the rest to, the search answers early.
	run, out, err := timed(exec.Command(o.nexusBin, "--vault", o.dir, "search", "--hold", "1m", "deploy staging"))
	if err != nil {
		return firstSearch{}, err
	}
	fs := firstSearch{buildRun: run, Indexed: -1}
	if m := firstSearchRe.FindSubmatch(out); m != nil {
		fs.Indexed, _ = strconv.Atoi(string(m[1]))
		fs.Total, _ = strconv.Atoi(string(m[2]))
	}
	// Asked to stop, the holder steps down once its catch-up is done
	// (--stop may say it stopped before that): wait for its process,
	// and until the manifest no longer says partial=1 (the holder may
	// not be up yet when first asked).
	start := time.Now()
	manifest := filepath.Join(o.dir, ".nexus", "index", "manifest")
	for time.Since(start) < 30*time.Minute {
		out, _ := exec.Command(o.nexusBin, "--vault", o.dir, "index", "hold", "--stop").CombinedOutput()
		if m := holderPIDRe.FindSubmatch(out); m != nil {
			pid, _ := strconv.Atoi(string(m[1]))
			for time.Since(start) < 30*time.Minute {
				if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
					break
				}
				time.Sleep(50 * time.Millisecond) // a bench's poll: no event to wait on for another process's exit
			}
			continue
		}
		if head, err := os.ReadFile(manifest); err == nil && !strings.Contains(strings.SplitN(string(head), "\n", 2)[0], " partial=1") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	fs.RestSecond = time.Since(start).Seconds()
	return fs, nil
}

// holderPIDRe finds the holder's process in 'nexus index hold --stop'.
var holderPIDRe = regexp.MustCompile(`pid (\d+)`)

// runBuilds is -builds: the vault in o.dir must exist (run the full bench
// once, or -cold's generation).
func runBuilds(o options, w io.Writer) (*buildsReport, error) {
	if o.nexusBin == "" {
		return nil, fmt.Errorf("-builds needs -nexus BINARY")
	}
	// Never replace a vault of another size: -notes defaults to 10000,
	// and a -dir of 100,000 notes is not regenerated in a minute.
	if data, err := os.ReadFile(filepath.Join(o.dir, ".nexus", "bench.json")); err == nil {
		var saved struct{ Key string }
		want := fmt.Sprintf("notes=%d seed=%d", o.notes, o.seed)
		if json.Unmarshal(data, &saved) == nil && saved.Key != want {
			return nil, fmt.Errorf("-builds: the vault in %s was generated with %s, not %s: pass the same -notes", o.dir, saved.Key, want)
		}
	}
	if _, err := ensureVault(o, w); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	exec.Command(o.nexusBin, "--vault", o.dir, "index", "hold", "--stop").Run()
	rep := &buildsReport{Memory: o.memory}
	timedOut := func(cmd *exec.Cmd) (buildRun, []byte, error) {
		cmd.Env = append(os.Environ(), "NEXUS_SEARCH_HOLD=0")
		start := time.Now()
		out, peak, anon, err := runPeaks(cmd)
		if err != nil {
			return buildRun{}, out, fmt.Errorf("%v: %v\n%s", cmd.Args, err, out)
		}
		return buildRun{
			Seconds: time.Since(start).Seconds(),
			CPU:     (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(),
			PeakMB:  peak,
			AnonMB:  anon,
			Load:    loadAverage(),
		}, out, nil
	}
	timed := func(cmd *exec.Cmd) (buildRun, error) {
		r, _, err := timedOut(cmd)
		return r, err
	}
	for i := range o.builds {
		args := []string{"--vault", o.dir, "index", "rebuild"}
		if o.memory != "" {
			args = append(args, "--memory", o.memory)
		}
		n, err := timed(exec.Command(o.nexusBin, args...))
		if err != nil {
			return nil, err
		}
		f, err := timed(exec.Command(exe, "-fts-build-only", "-dir", o.dir, "-notes", fmt.Sprint(o.notes)))
		if err != nil {
			return nil, err
		}
		rep.Nexus, rep.FTS5 = append(rep.Nexus, n), append(rep.FTS5, f)
		fmt.Fprintf(w, "build %d: nexus %.1fs (cpu %.1fs) %.0f MB (anonymous %.0f MB), fts5 %.1fs (cpu %.1fs) %.0f MB (anonymous %.0f MB), load %s\n", i+1, n.Seconds, n.CPU, n.PeakMB, n.AnonMB, f.Seconds, f.CPU, f.PeakMB, f.AnonMB, f.Load)
		if o.firstSearch {
			fs, err := timeFirstSearch(o, timedOut)
			if err != nil {
				return nil, err
			}
			rep.First = append(rep.First, fs)
			fmt.Fprintf(w, "first search %d, no index: %.2fs (cpu %.2fs) %.0f MB, answered from %d of %d files; the holder indexed the rest in %.1fs, load %s\n", i+1, fs.Seconds, fs.CPU, fs.PeakMB, fs.Indexed, fs.Total, fs.RestSecond, fs.Load)
		}
	}
	return rep, nil
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}

func median(runs []buildRun, f func(buildRun) float64) float64 {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = f(r)
	}
	sort.Float64s(v)
	if len(v) == 0 {
		return 0
	}
	return v[len(v)/2]
}

func (r *buildsReport) print(w io.Writer) {
	sec := func(b buildRun) float64 { return b.Seconds }
	cpu := func(b buildRun) float64 { return b.CPU }
	peak := func(b buildRun) float64 { return b.PeakMB }
	anon := func(b buildRun) float64 { return b.AnonMB }
	ns, nc, np, na := median(r.Nexus, sec), median(r.Nexus, cpu), median(r.Nexus, peak), median(r.Nexus, anon)
	fs, fc, fp, fa := median(r.FTS5, sec), median(r.FTS5, cpu), median(r.FTS5, peak), median(r.FTS5, anon)
	mem := r.Memory
	if mem == "" {
		mem = "default"
	}
	fmt.Fprintf(w, "builds as processes, %d each, alternating (medians; --memory %s):\n", len(r.Nexus), mem)
	fmt.Fprintf(w, "  nexus index rebuild: %.1f s wall, %.1f s cpu, peak RSS %.0f MB (anonymous %.0f MB)\n", ns, nc, np, na)
	fmt.Fprintf(w, "  fts5 build:          %.1f s wall, %.1f s cpu, peak RSS %.0f MB (anonymous %.0f MB)\n", fs, fc, fp, fa)
	if fs > 0 && fc > 0 && fp > 0 {
		fmt.Fprintf(w, "  nexus / fts5: wall %.2fx, cpu %.2fx, peak RSS %.2fx", ns/fs, nc/fc, np/fp)
		if fa > 0 {
			fmt.Fprintf(w, ", anonymous %.2fx", na/fa)
		}
		fmt.Fprintln(w)
	}
	if len(r.First) > 0 {
		runs := make([]buildRun, len(r.First))
		for i, f := range r.First {
			runs[i] = f.buildRun
		}
		fmt.Fprintf(w, "  first search with no index: %.2f s wall, %.2f s cpu, peak RSS %.0f MB (median of %d)\n", median(runs, sec), median(runs, cpu), median(runs, peak), len(runs))
	}
}
