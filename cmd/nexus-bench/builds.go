package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
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
}

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
	timed := func(cmd *exec.Cmd) (buildRun, error) {
		cmd.Env = append(os.Environ(), "NEXUS_SEARCH_HOLD=0")
		start := time.Now()
		out, peak, anon, err := runPeaks(cmd)
		if err != nil {
			return buildRun{}, fmt.Errorf("%v: %v\n%s", cmd.Args, err, out)
		}
		return buildRun{
			Seconds: time.Since(start).Seconds(),
			CPU:     (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(),
			PeakMB:  peak,
			AnonMB:  anon,
			Load:    loadAverage(),
		}, nil
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
}
