package livelog

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// The multi-process tests re-execute the test binary as TestHelperProcess
// with these variables set.
const (
	envHelper = "NEXUS_LIVELOG_HELPER" // "append", "append-forever", "bench" or "floor"
	envVault  = "NEXUS_LIVELOG_VAULT"
	envAgent  = "NEXUS_LIVELOG_AGENT"
	envID     = "NEXUS_LIVELOG_ID"
	envCount  = "NEXUS_LIVELOG_COUNT"
	envBody   = "NEXUS_LIVELOG_BODY" // body size in bytes
)

// TestHelperProcess is not a test: it is the child process of the
// multi-process tests. It appends NEXUS_LIVELOG_COUNT entries (or appends
// until killed), printing a line after each.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(envHelper)
	if mode == "" {
		t.Skip("helper process only")
	}
	if mode == "floor" {
		fsyncFloorHelper()
	}
	v, err := vault.Open(os.Getenv(envVault))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	l, _ := Open(v, Options{})
	agent, id := os.Getenv(envAgent), os.Getenv(envID)
	n, _ := strconv.Atoi(os.Getenv(envCount))
	size, _ := strconv.Atoi(os.Getenv(envBody))
	body := strings.Repeat("x", size)
	out := bufio.NewWriter(os.Stdout)
	if mode == "bench" {
		// Time each append; the parent gathers the latencies. Start
		// only when every process is ready would need a barrier; the
		// parent measures wall time from the first start instead.
		lat := make([]time.Duration, 0, n)
		for i := range n {
			t0 := time.Now()
			if _, err := l.Append(agent, Entry{Channel: "load", Kind: "bench", Summary: fmt.Sprintf("p%s n%d", id, i)}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(4)
			}
			lat = append(lat, time.Since(t0))
		}
		for _, d := range lat {
			fmt.Fprintln(out, int64(d))
		}
		out.Flush()
		os.Exit(0)
	}
	for i := 0; mode == "append-forever" || i < n; i++ {
		if _, err := l.Append(agent, Entry{Channel: "load", Kind: "test", Summary: fmt.Sprintf("p%s n%d", id, i), Body: body}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(4)
		}
		if mode == "append-forever" {
			fmt.Fprintln(out, i)
			out.Flush()
		}
	}
	out.Flush()
	os.Exit(0)
}

// fsyncFloorHelper is the helper of the fsync floor: it writes one short
// line to a file of its own in the vault folder's log/live (so on the
// same file system, in the same folder as the feeds) and fsyncs it,
// NEXUS_LIVELOG_COUNT times, printing the latency of each, and exits.
func fsyncFloorHelper() {
	n, _ := strconv.Atoi(os.Getenv(envCount))
	dir := os.Getenv(envVault) + "/log/live"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	f, err := os.OpenFile(dir+"/floor-"+os.Getenv(envID)+".txt", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	line := []byte("### 2026-11-29T15:05:37Z lyra [load/bench] one line, fsynced\n")
	lat := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if _, err := f.Write(line); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(4)
		}
		if err := f.Sync(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(4)
		}
		lat = append(lat, time.Since(t0))
	}
	out := bufio.NewWriter(os.Stdout)
	for _, d := range lat {
		fmt.Fprintln(out, int64(d))
	}
	out.Flush()
	os.Exit(0)
}

func helperCmd(v *vault.Vault, mode, agent string, id, count, body int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), envHelper+"="+mode, envVault+"="+v.Root(), envAgent+"="+agent,
		envID+"="+strconv.Itoa(id), envCount+"="+strconv.Itoa(count), envBody+"="+strconv.Itoa(body))
	cmd.Stderr = os.Stderr
	return cmd
}

// appenders are the agents the multi-process tests append as, in turn:
// three writers (AGENT@test) whose feeds fill at once.
var appenders = []string{"lyra", "ella", "mallory"}

// concurrentAppends runs procs processes of perProc appends each, at once,
// spread over three writers, and checks that every entry is there, intact,
// in each process's order, in its writer's feed file, numbered 1, 2, ...
// without a gap or a repeat per feed.
func concurrentAppends(t *testing.T, procs, perProc int) {
	v := mustVault(t)
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := helperCmd(v, "append", appenders[p%len(appenders)], p, perProc, 0)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("helper: %v", err)
		}
	}
	l := mustLog(t, v)
	es, err := l.Read(ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != procs*perProc {
		t.Fatalf("%d entries, want %d", len(es), procs*perProc)
	}
	next := make([]int, procs)
	seqs := map[string]map[int64]bool{}
	for _, e := range es {
		var p, n int
		if _, err := fmt.Sscanf(e.Summary, "p%d n%d", &p, &n); err != nil || !e.Signed || e.Torn || e.Hand {
			t.Fatalf("bad entry %+v", e)
		}
		if n != next[p] {
			t.Fatalf("process %d: entry n%d after n%d", p, n, next[p]-1)
		}
		next[p]++
		w := appenders[p%len(appenders)] + "@" + testDevice
		if e.Writer != w || !strings.HasSuffix(e.Segment, "/"+w+".md") || !strings.HasPrefix(e.Segment, vault.LiveLogDir+"/") {
			t.Fatalf("entry of process %d in feed %q, file %s; want %s's feed", p, e.Writer, e.Segment, w)
		}
		if seqs[w] == nil {
			seqs[w] = map[int64]bool{}
		}
		if seqs[w][e.Seq] {
			t.Fatalf("%s: seq %d twice", w, e.Seq)
		}
		seqs[w][e.Seq] = true
	}
	for w, m := range seqs {
		for s := int64(1); s <= int64(len(m)); s++ {
			if !m[s] {
				t.Fatalf("%s: seq %d missing of %d", w, s, len(m))
			}
		}
	}
	if len(seqs) != min(procs, len(appenders)) {
		t.Fatalf("%d feeds, want %d", len(seqs), min(procs, len(appenders)))
	}
	r := mustVerify(t, l)
	if !r.OK(true) || r.Counts[StatusIntact] != procs*perProc {
		t.Fatalf("verify: %v %+v", r.Counts, r.Findings[:min(5, len(r.Findings))])
	}
}

// TestConcurrentProcesses: 8 processes appending at once. The full
// 8 × 2,000 runs behind the soak build tag (TestConcurrentProcessesSoak).
func TestConcurrentProcesses(t *testing.T) {
	concurrentAppends(t, 8, 250)
}

// TestSIGKILLMidAppend kills appenders of large entries again and again;
// the log stays readable, each kill leaves at most one torn tail, and the
// next append is clean.
func TestSIGKILLMidAppend(t *testing.T) {
	v := mustVault(t)
	const kills = 6
	for k := range kills {
		cmd := helperCmd(v, "append-forever", "lyra", k, 0, 300<<10)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until it has appended k+1 entries, then kill it while it is
		// busy with the next.
		sc := bufio.NewScanner(stdout)
		for i := 0; i <= k && sc.Scan(); i++ {
		}
		time.Sleep(time.Duration(k*300) * time.Microsecond) // vary where the kill lands
		cmd.Process.Kill()                                  // SIGKILL on Unix
		cmd.Wait()
	}
	l := mustLog(t, v)
	if _, err := l.Read(ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := l.AppendDetailed("ella", Entry{Summary: "after the kills"})
	if err != nil {
		t.Fatal(err)
	}
	r := mustVerify(t, l)
	for _, f := range r.Findings {
		if f.Status != StatusTruncated && f.Status != StatusUnsigned {
			t.Errorf("unexpected finding %+v", f)
		}
	}
	if n := r.Counts[StatusTruncated] + r.Counts[StatusUnsigned]; n > kills {
		t.Fatalf("%d torn tails for %d kills", n, kills)
	}
	last, _ := l.Read(ReadOptions{Last: 1})
	if len(last) != 1 || last[0].Summary != "after the kills" || last[0].Hash != res.Entry.Hash {
		t.Fatalf("last entry %+v", last)
	}
	if r.Counts[StatusIntact] < kills*(kills+1)/2+1 {
		t.Fatalf("only %d intact entries", r.Counts[StatusIntact])
	}
	t.Logf("kills %d: %v", kills, r.Counts)
}

// TestCursorExactlyOnce: ella reads and acknowledges in many rounds while
// other processes append; she sees each of their entries exactly once, in
// order. The full 8 × 2,000 runs behind the soak build tag.
func TestCursorExactlyOnce(t *testing.T) {
	cursorExactlyOnce(t, []string{"lyra", "mallory", "lyra"}, 150)
}

// cursorExactlyOnce starts one appending process per agent given, perProc
// appends each, while two sessions of ella read and acknowledge at once,
// each with its own Log: together they must see every entry of the others
// exactly once, each process's entries in order.
func cursorExactlyOnce(t *testing.T, agents []string, perProc int) {
	v := mustVault(t)
	var cmds []*exec.Cmd
	want := 0
	for p, agent := range agents {
		cmd := helperCmd(v, "append", agent, p, perProc, 0)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		if agent != "ella" {
			want += perProc
		}
	}
	done := make(chan struct{})
	go func() {
		for _, c := range cmds {
			c.Wait()
		}
		close(done)
	}()
	var mu sync.Mutex // protects seen and order
	seen := map[string]int{}
	order := map[int][]string{} // by reader
	rounds := 0
	reader := func(id int) {
		l := mustLog(t, v)
		read := func() {
			es, err := l.ReadUnread("ella", true)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, e := range es {
				if e.Agent == "ella" {
					t.Errorf("ella's own entry delivered to her: %s", e.Summary)
				}
				seen[e.Summary]++
				order[id] = append(order[id], e.Summary)
			}
			rounds++
		}
		for running := true; running; {
			select {
			case <-done:
				running = false
			default:
				read()
				time.Sleep(time.Millisecond)
			}
		}
		read()
	}
	var wg sync.WaitGroup
	for id := range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); reader(id) }()
	}
	wg.Wait()
	l := mustLog(t, v)
	if len(seen) != want {
		t.Fatalf("saw %d distinct entries, want %d", len(seen), want)
	}
	for s, n := range seen {
		if n != 1 {
			t.Fatalf("%s seen %d times", s, n)
		}
	}
	// Each reader sees each process's entries in order (with gaps: the
	// other reader took some).
	for id, o := range order {
		last := map[int]int{}
		for _, s := range o {
			var p, n int
			fmt.Sscanf(s, "p%d n%d", &p, &n)
			if prev, ok := last[p]; ok && n <= prev {
				t.Fatalf("reader %d: %s after n%d", id, s, prev)
			}
			last[p] = n
		}
	}
	if n, _, _ := l.UnreadCount("ella"); n != 0 {
		t.Fatalf("%d still unread", n)
	}
	t.Logf("%d rounds", rounds)
}
