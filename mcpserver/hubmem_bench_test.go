package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-memory/nexus/identity"
)

// BenchmarkHubMemoryLogGrowth runs 'nexus serve --http' as its own process
// (the hub, which holds and watches the search index), connects 64 MCP
// clients (8 agents, 8 sessions each) and has them append log entries as
// fast as they can for a minute or until the log holds 100 MiB, sampling
// the server's resident memory (VmRSS) every second. Bodies are 4 KiB of
// words with a unique token per line; the index must keep up by reading
// only the new bytes of each feed, and the server's memory must stay flat.
// On a loaded two-core machine the log grows by about 10 MB a minute, so
// reaching 100 MiB takes NEXUS_HUB_SECONDS=900.
//
//	go test ./mcpserver -run '^$' -bench HubMemoryLogGrowth -benchtime 1x
//
// NEXUS_HUB_SECONDS sets the longest run (default 60), NEXUS_HUB_MIB the
// log size that ends it sooner (default 100), NEXUS_HUB_BODY the body size
// in bytes (default 4096), NEXUS_HUB_CLIENTS the clients (default 64),
// NEXUS_HUB_BIN another nexus binary to run as the hub (to compare with
// an older build), NEXUS_HUB_MEMORY the hub's --memory, NEXUS_HUB_READ_EVERY=K makes every Kth call of each
// client a log_read of its unread entries instead of an append (default 0:
// appends only). NEXUS_HUB_PPROF=DIR runs the hub as this test binary
// (the same server, see runHubChild) with net/http/pprof, and saves its
// heap.pprof and allocs.pprof into DIR just before the load stops (and
// heap-NNN.pprof every 10 s of it);
// NEXUS_HUB_LOG=FILE keeps the hub's stderr (with GODEBUG=gctrace=1, its
// heap at each collection). Linux only (it reads /proc).
func BenchmarkHubMemoryLogGrowth(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc/PID/status")
	}
	seconds := envInt("NEXUS_HUB_SECONDS", 60)
	clients := envInt("NEXUS_HUB_CLIENTS", 64)
	targetMiB := float64(envInt("NEXUS_HUB_MIB", 100))
	bodySize := envInt("NEXUS_HUB_BODY", 4096)
	readEvery := envInt("NEXUS_HUB_READ_EVERY", 0)
	bin := nexusBin
	if s := os.Getenv("NEXUS_HUB_BIN"); s != "" {
		bin = s
	}
	names := []string{"lyra", "ella", "vega", "orion", "mira", "tomas", "juno", "kai"}
	v := mustVault(b, names...)
	tokens := map[string]string{}
	for _, n := range names {
		tok, err := identity.NewToken(v, n, false)
		if err != nil {
			b.Fatal(err)
		}
		tokens[n] = tok
	}
	args := []string{"--vault", v.Root(), "serve", "--http", "127.0.0.1:0", "--log-level", "info"}
	if m := os.Getenv("NEXUS_HUB_MEMORY"); m != "" {
		args = append(args, "--memory", m)
	}
	cmd := exec.Command(bin, args...)
	profDir := os.Getenv("NEXUS_HUB_PPROF")
	if profDir != "" {
		// The same server in a process of its own, with net/http/pprof.
		cmd = exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), hubChildEnv+"="+v.Root())
	}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	addrc, pprofc := make(chan string, 1), make(chan string, 1)
	go func() {
		var tee io.Writer = io.Discard
		if path := os.Getenv("NEXUS_HUB_LOG"); path != "" {
			if f, err := os.Create(path); err == nil {
				defer f.Close()
				tee = f
			}
		}
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`addr=(\S+)`)
		for sc.Scan() {
			fmt.Fprintln(tee, sc.Text())
			if a, ok := strings.CutPrefix(sc.Text(), "pprof="); ok {
				pprofc <- a
				continue
			}
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addrc <- m[1]:
				default:
				}
			}
		}
	}()
	var pprofAt string
	pprofAddr := func() string {
		if pprofAt == "" {
			pprofAt = <-pprofc
		}
		return pprofAt
	}
	var url string
	select {
	case addr := <-addrc:
		url = "http://" + addr + "/mcp"
	case <-time.After(30 * time.Second):
		b.Fatal("server never said where it listens")
	}
	sessions := make([]*sdk.ClientSession, clients)
	for i := range sessions {
		sessions[i] = connectHTTP(b, url, tokens[names[i%len(names)]], "", nil)
	}
	words := strings.Fields("deploy rollback latency cache quota shard index replica queue worker 배포 장애 로그 검색 설정 timeout budget incident review merge")
	bodyOf := func(client, step int) string {
		var body strings.Builder
		for i := 0; body.Len() < bodySize; i++ {
			body.WriteString(words[(i*7+step)%len(words)])
			if i%12 == 11 {
				fmt.Fprintf(&body, " c%ds%dl%d.\n", client, step, i/12)
			} else {
				body.WriteByte(' ')
			}
		}
		return body.String()
	}

	type sample struct {
		at     time.Duration
		rss    float64 // MiB
		logMiB float64
	}
	var (
		samples  []sample
		appends  atomic.Int64
		reads    atomic.Int64
		failures atomic.Int64
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	start := time.Now()
	sampleNow := func() {
		samples = append(samples, sample{time.Since(start), procRSS(cmd.Process.Pid), float64(dirBytes(filepath.Join(v.Root(), "log"))) / (1 << 20)})
	}
	sampleNow()
	cpu0 := procCPU(cmd.Process.Pid)
	b.ResetTimer()
	for i, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if readEvery > 0 && n%readEvery == readEvery-1 {
					res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "log_read", Arguments: map[string]any{}})
					if err != nil || res.IsError {
						failures.Add(1)
					} else {
						reads.Add(1)
					}
					continue
				}
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "log_append", Arguments: map[string]any{
					"summary": fmt.Sprintf("client %d step %d: %s", i, n, words[n%len(words)]),
					"body":    bodyOf(i, n),
					"channel": "bench",
				}})
				if err != nil || res.IsError {
					failures.Add(1)
					continue
				}
				appends.Add(1)
			}
		}()
	}
	tick := time.NewTicker(time.Second)
	deadline := time.After(time.Duration(seconds) * time.Second)
loop:
	for {
		select {
		case <-tick.C:
			sampleNow()
			if profDir != "" && len(samples)%10 == 0 {
				// The heap in use every 10 s: what the hub holds varies.
				if err := saveProfile(pprofAddr(), "heap", profDir, fmt.Sprintf("heap-%03d", len(samples))); err != nil {
					b.Errorf("save the hub's heap profile: %v", err)
				}
			}
			if samples[len(samples)-1].logMiB >= targetMiB {
				break loop
			}
		case <-deadline:
			break loop
		}
	}
	if profDir != "" {
		// Under load still: what is in use and what was allocated.
		for _, name := range []string{"heap", "allocs"} {
			if err := saveProfile(pprofAddr(), name, profDir, name); err != nil {
				b.Errorf("save the hub's %s profile: %v", name, err)
			}
		}
		b.Logf("profiles in %s: go tool pprof -sample_index=alloc_space %s %s/allocs.pprof", profDir, os.Args[0], profDir)
	}
	close(stop)
	wg.Wait()
	tick.Stop()
	hubCPU := procCPU(cmd.Process.Pid) - cpu0
	anon := procStatus(cmd.Process.Pid, "RssAnon:")
	elapsed := time.Since(start)
	b.StopTimer()
	sampleNow()

	if testing.Verbose() {
		for _, s := range samples {
			b.Logf("%5.1fs rss %7.1f MiB log %7.1f MiB", s.at.Seconds(), s.rss, s.logMiB)
		}
	}

	// The index kept up: the last entries are found by the hub's search.
	probe := fmt.Sprintf("hubprobe%d", time.Now().UnixNano())
	mustOK(b, sessions[0], "log_append", map[string]any{"summary": "probe " + probe})
	visible := false
	for wait := time.Now(); time.Since(wait) < 30*time.Second; time.Sleep(50 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := sessions[1].CallTool(ctx, &sdk.CallToolParams{Name: "memory_search", Arguments: map[string]any{"query": probe}})
		cancel()
		if err != nil || res.IsError {
			b.Logf("memory_search after the run: %v", err)
			continue
		}
		var found struct{ Hits []any }
		raw, _ := json.Marshal(res.StructuredContent)
		if json.Unmarshal(raw, &found) == nil && len(found.Hits) > 0 {
			visible = true
			b.ReportMetric(float64(time.Since(wait).Milliseconds()), "probe-visible-ms")
			break
		}
	}
	if !visible {
		b.Errorf("the index never showed an entry appended after the run")
	}

	// Memory once the log passed a tenth of its final size (after start-up
	// and the first segments) against the peak and the end.
	final := samples[len(samples)-1].logMiB
	var early, peak float64
	for _, s := range samples {
		if early == 0 && s.logMiB >= final/10 {
			early = s.rss
		}
		peak = max(peak, s.rss)
	}
	b.ReportMetric(float64(appends.Load())/elapsed.Seconds(), "appends/s")
	b.ReportMetric(float64(reads.Load())/elapsed.Seconds(), "reads/s")
	b.ReportMetric(float64(failures.Load()), "failures")
	b.ReportMetric(final, "log-MiB")
	b.ReportMetric(samples[0].rss, "rss-idle-MiB")
	b.ReportMetric(early, "rss-at-10%-MiB")
	b.ReportMetric(peak, "rss-peak-MiB")
	b.ReportMetric(samples[len(samples)-1].rss, "rss-end-MiB")
	b.ReportMetric(anon, "rssanon-end-MiB")
	// The hub's CPU (user + system) per call: what a lower memory limit
	// costs in collection.
	if calls := appends.Load() + reads.Load(); calls > 0 {
		b.ReportMetric(float64(hubCPU.Microseconds())/1000/float64(calls), "hub-cpu-ms/call")
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// procRSS is a process's resident set in MiB (0 if unknown).
func procRSS(pid int) float64 { return procStatus(pid, "VmRSS:") }

// procCPU is the CPU time (user + system) a process used so far.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name in parentheses: utime and stime
	// are the 14th and 15th of the line, in clock ticks (100 a second).
	_, rest, _ := strings.Cut(string(data), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// procStatus is a size field of /proc/PID/status ("VmRSS:") in MiB (0 if
// unknown).
func procStatus(pid int, field string) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
