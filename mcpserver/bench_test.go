package mcpserver_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

// Benchmarks of SPEC §6 speed targets. Run:
//
//	go test ./mcpserver -run '^$' -bench . -benchtime 2000x
//
// Stdio benchmarks talk to a spawned 'nexus serve --stdio' through the
// official SDK client, so each number is a full round trip between two
// processes. Each reports p50 and p95 in milliseconds.

// latencies collects per-call durations and reports percentiles.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	s := slices.Clone(l)
	slices.Sort(s)
	pct := func(p float64) float64 { return float64(s[int(p*float64(len(s)-1))]) / 1e6 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
}

func timedCall(b *testing.B, cs *sdk.ClientSession, name string, args map[string]any) time.Duration {
	start := time.Now()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	d := time.Since(start)
	if err != nil || res.IsError {
		b.Fatalf("%s: %v %v", name, err, texts(res))
	}
	return d
}

func BenchmarkStdioMemoryAdd(b *testing.B) {
	v := mustVault(b, "lyra")
	// Room for every entry the benchmark adds.
	if err := v.UpdateConfig(func(c *vault.Config) error { c.MemoryCharLimit = 50_000_000; return nil }); err != nil {
		b.Fatal(err)
	}
	cs := connectStdio(b, v, "lyra", nil)
	timedCall(b, cs, "memory", map[string]any{"action": "add", "content": "warm up"})
	lat := make(latencies, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lat = append(lat, timedCall(b, cs, "memory", map[string]any{"action": "add", "content": fmt.Sprintf("benchmark note %d: the build uses make ci", i)}))
	}
	b.StopTimer()
	lat.report(b)
}

func BenchmarkStdioLogReadUnread(b *testing.B) {
	v := mustVault(b, "lyra", "ella")
	lg, err := livelog.Open(v, livelog.Options{})
	if err != nil {
		b.Fatal(err)
	}
	// A log with history: 2,000 entries already read by lyra.
	for i := 0; i < 2000; i++ {
		if _, err := lg.Append("ella", livelog.Entry{Summary: fmt.Sprintf("old entry %d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	cs := connectStdio(b, v, "lyra", nil)
	timedCall(b, cs, "log_read", nil)
	lat := make(latencies, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if _, err := lg.Append("ella", livelog.Entry{Summary: fmt.Sprintf("new entry %d", i), Body: "what changed"}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		lat = append(lat, timedCall(b, cs, "log_read", nil))
	}
	b.StopTimer()
	lat.report(b)
}

var words = []string{"atlas", "launch", "release", "budget", "review", "parser", "deploy", "rollback", "schema", "cache", "index", "agent", "memory", "vault", "token", "배포", "검색", "일정", "회의", "문서"}

// searchVault is a 10,000-note vault with a built index, made once.
var searchVault = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "nexus-bench-10k-")
	if err != nil {
		return "", err
	}
	cleanupDirs = append(cleanupDirs, dir)
	v, _, err := vault.Init(dir)
	if err != nil {
		return "", err
	}
	for i := 0; i < 10000; i++ {
		var body string
		for j := 0; j < 60; j++ {
			body += words[(i*7+j*13+j*j)%len(words)] + " "
			if j%12 == 11 {
				body += "\n"
			}
		}
		text := fmt.Sprintf("---\ntags: [%s]\n---\n# Note %d about %s\n\n%s\n## Details\n%s %s\n", words[i%len(words)], i, words[(i*3)%len(words)], body, words[(i*11)%len(words)], fmt.Sprint("unique", i))
		p := filepath.Join(dir, "notes", fmt.Sprintf("%02d", i%100), fmt.Sprintf("note-%05d.md", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	ix, err := index.Open(v, index.Options{})
	if err != nil {
		return "", err
	}
	defer ix.Close()
	return dir, ix.Sync(context.Background())
})

func BenchmarkStdioMemorySearch10k(b *testing.B) {
	dir, err := searchVault()
	if err != nil {
		b.Fatal(err)
	}
	v, err := vault.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "agents", "lyra")); err != nil {
		v = mustAgentIn(b, v, "lyra")
	}
	cs := connectStdio(b, v, "lyra", nil)
	// Wait until the server's index holder has caught up.
	for deadline := time.Now().Add(5 * time.Minute); ; {
		r := mustOK(b, cs, "memory_search", map[string]any{"query": "unique9999"})
		if hits, _ := r["hits"].([]any); len(hits) > 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("index never caught up")
		}
		time.Sleep(100 * time.Millisecond)
	}
	lat := make(latencies, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := words[i%len(words)] + " " + words[(i*7+3)%len(words)]
		lat = append(lat, timedCall(b, cs, "memory_search", map[string]any{"query": q, "maxResults": 10}))
	}
	b.StopTimer()
	lat.report(b)
}

func mustAgentIn(b *testing.B, v *vault.Vault, name string) *vault.Vault {
	b.Helper()
	out, err := execNexus(v.Root(), "agent", "add", name)
	if err != nil {
		b.Fatalf("agent add: %v\n%s", err, out)
	}
	return v
}

// BenchmarkHTTPReadThroughput4Clients: 4 clients, each with its own
// session, call read tools concurrently (memory_get, fact_read,
// decision_list, checkpoint_load in turn); reports calls per second.
func BenchmarkHTTPReadThroughput4Clients(b *testing.B) {
	benchHTTPReads(b, []string{"memory_get", "fact_read", "decision_list", "checkpoint_load"})
}

// BenchmarkHTTPReadThroughput4ClientsPerTool is the same, one read tool at
// a time.
func BenchmarkHTTPReadThroughput4ClientsPerTool(b *testing.B) {
	for _, name := range []string{"memory_get", "fact_read", "decision_list", "checkpoint_load", "log_read_last"} {
		b.Run(name, func(b *testing.B) { benchHTTPReads(b, []string{name}) })
	}
}

// BenchmarkHTTPReadThroughput4ClientsBinary is the mix against 'nexus
// serve --http' running as its own process, as deployed.
func BenchmarkHTTPReadThroughput4ClientsBinary(b *testing.B) {
	v := mustVault(b, "lyra", "ella")
	tokens := map[string]string{}
	for _, n := range []string{"lyra", "ella"} {
		tok, err := identity.NewToken(v, n, false)
		if err != nil {
			b.Fatal(err)
		}
		tokens[n] = tok
	}
	url := startBinaryHTTP(b, v)
	runHTTPReads(b, v, url, tokens, []string{"memory_get", "fact_read", "decision_list", "checkpoint_load"})
}

// startBinaryHTTP runs 'nexus serve --http 127.0.0.1:0' and returns its
// endpoint URL; the process is stopped when tb ends.
func startBinaryHTTP(tb testing.TB, v *vault.Vault) string {
	tb.Helper()
	cmd := exec.Command(nexusBin, "--vault", v.Root(), "serve", "--http", "127.0.0.1:0", "--log-level", "info")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`addr=(\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addrc <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case addr := <-addrc:
		return "http://" + addr + "/mcp"
	case <-time.After(30 * time.Second):
		tb.Fatal("server never said where it listens")
		return ""
	}
}

func benchHTTPReads(b *testing.B, tools []string) {
	v := mustVault(b, "lyra", "ella")
	_, url, tokens := startServer(b, v, "lyra", "ella")
	runHTTPReads(b, v, url, tokens, tools)
}

func runHTTPReads(b *testing.B, v *vault.Vault, url string, tokens map[string]string, tools []string) {
	mustWrite(b, v, "projects/atlas.md", "# Atlas\n\nThe launch plan.\n")
	var clients []*sdk.ClientSession
	for i := 0; i < 4; i++ {
		cs := connectHTTP(b, url, tokens[[]string{"lyra", "ella"}[i%2]], "", nil)
		mustOK(b, cs, "memory_get", map[string]any{"path": "projects/atlas.md"})
		clients = append(clients, cs)
	}
	argsOf := map[string]map[string]any{
		"memory_get":    {"path": "projects/atlas.md"},
		"log_read_last": {"last": 5},
	}
	type read struct {
		name string
		args map[string]any
	}
	var reads []read
	for _, t := range tools {
		name := t
		if t == "log_read_last" {
			name = "log_read"
		}
		reads = append(reads, read{name, argsOf[t]})
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for _, cs := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				r := reads[i%int64(len(reads))]
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: r.name, Arguments: r.args})
				if err != nil || res.IsError {
					b.Errorf("%s: %v", r.name, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
}

// BenchmarkStdioRoundTripMemoryGet is the floor of a stdio round trip: a
// small read, no writes.
func BenchmarkStdioRoundTripMemoryGet(b *testing.B) {
	v := mustVault(b, "lyra")
	mustWrite(b, v, "projects/atlas.md", "# Atlas\n\nThe launch plan.\n")
	cs := connectStdio(b, v, "lyra", nil)
	timedCall(b, cs, "memory_get", map[string]any{"path": "projects/atlas.md"})
	lat := make(latencies, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lat = append(lat, timedCall(b, cs, "memory_get", map[string]any{"path": "projects/atlas.md"}))
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkDomainMemoryAdd is the same add as BenchmarkStdioMemoryAdd
// without MCP: the agents package alone (lock, re-read, scan, atomic
// replace with fsync), in this process.
func BenchmarkDomainMemoryAdd(b *testing.B) {
	v := mustVault(b, "lyra")
	if err := v.UpdateConfig(func(c *vault.Config) error { c.MemoryCharLimit = 50_000_000; return nil }); err != nil {
		b.Fatal(err)
	}
	m, err := agents.OpenMemory(v, "lyra", agents.TargetMemory)
	if err != nil {
		b.Fatal(err)
	}
	lat := make(latencies, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := m.Apply(agents.Op{Action: agents.ActionAdd, Content: fmt.Sprintf("benchmark note %d: the build uses make ci", i)}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	lat.report(b)
}
