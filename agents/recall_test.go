package agents

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

func TestRecallPairsSearchWithRead(t *testing.T) {
	v := memTestVault(t, 0, 0)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	r := Recall(v)
	fact := FactPath("lyra", "staging-ssh")
	other := FactPath("lyra", "other")
	r.Record(RecallEvent{Time: t0, Agent: "lyra", Kind: RecallHits, Query: "Staging  port", Hits: []string{fact, other}})
	r.Record(RecallEvent{Time: t0.Add(time.Minute), Agent: "lyra", Kind: RecallRead, Path: fact})
	// Another agent's search does not make lyra's read a search read.
	r.Record(RecallEvent{Time: t0.Add(2 * time.Minute), Agent: "orion", Kind: RecallHits, Query: "vpn", Hits: []string{other}})
	r.Record(RecallEvent{Time: t0.Add(3 * time.Minute), Agent: "lyra", Kind: RecallRead, Path: other})
	// A read long after the search is a plain read.
	r.Record(RecallEvent{Time: t0.Add(2 * time.Hour), Agent: "lyra", Kind: RecallRead, Path: fact})
	r.Record(RecallEvent{Time: t0.Add(3 * time.Hour), Agent: "lyra", Kind: RecallStart})
	s, err := LoadRecall(v)
	if err != nil {
		t.Fatal(err)
	}
	u := s.File(fact)
	if u.Reads != 2 || u.SearchReads != 1 || u.Queries["staging port"] != 1 || !u.LastRead.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("staging-ssh use = %+v", u)
	}
	if o := s.File(other); o.Reads != 1 || o.SearchReads != 1 || o.Queries["staging port"] != 1 {
		t.Errorf("other use = %+v (lyra's own search found it)", o)
	}
	if st := s.Session("lyra"); st.Count != 1 || !st.Last.Equal(t0.Add(3*time.Hour)) {
		t.Errorf("sessions = %+v", st)
	}
	// The log is folded away; loading again counts nothing twice.
	s2, err := LoadRecall(v)
	if err != nil {
		t.Fatal(err)
	}
	if s2.File(fact).Reads != 2 {
		t.Errorf("second load: %+v", s2.File(fact))
	}
	// A search in one fold pairs with a read in the next.
	r.Record(RecallEvent{Time: t0.Add(4 * time.Hour), Agent: "lyra", Kind: RecallHits, Query: "ssh", Hits: []string{fact}})
	if _, err := LoadRecall(v); err != nil {
		t.Fatal(err)
	}
	r.Record(RecallEvent{Time: t0.Add(4*time.Hour + time.Minute), Agent: "lyra", Kind: RecallRead, Path: fact})
	s3, _ := LoadRecall(v)
	if u := s3.File(fact); u.SearchReads != 2 || u.Queries["ssh"] != 1 {
		t.Errorf("across folds: %+v", u)
	}
}

func TestRecallFoldKilledHalfWayCountsOnce(t *testing.T) {
	v := memTestVault(t, 0, 0)
	r := Recall(v)
	for range 3 {
		r.Record(RecallEvent{Agent: "lyra", Kind: RecallRead, Path: "projects/a.md"})
	}
	if _, err := LoadRecall(v); err != nil {
		t.Fatal(err)
	}
	// Simulate a fold that wrote the summary but was killed before it
	// removed its log: put a merged log back.
	dir := v.MustPath(RecallDir)
	s, _ := readSummary(dir)
	s.Merged = append(s.Merged, "fold-1.log")
	if err := writeSummary(dir, s); err != nil {
		t.Fatal(err)
	}
	line := fmt.Sprintf(`{"a":"lyra","k":"read","p":"projects/a.md","t":%d}`+"\n", time.Now().UnixMilli())
	os.WriteFile(filepath.Join(dir, "fold-1.log"), []byte(line), 0o644)
	s, err := LoadRecall(v)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.File("projects/a.md").Reads; got != 3 {
		t.Errorf("reads = %d, want 3", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "fold-1.log")); !os.IsNotExist(err) {
		t.Errorf("merged log left behind: %v", err)
	}
	// A torn last line (a crash mid-append) is skipped, the rest counted.
	os.WriteFile(filepath.Join(dir, "events.log"), []byte(line+`{"a":"lyra","k":"re`), 0o644)
	s, _ = LoadRecall(v)
	if got := s.File("projects/a.md").Reads; got != 4 {
		t.Errorf("reads after torn line = %d, want 4", got)
	}
}

func TestEntryIDsInLines(t *testing.T) {
	data := []byte("one\n§\ntwo\nlines\n§\nthree")
	if got, want := EntryIDsInLines(data, 1, 0), []string{EntryID("one"), EntryID("two\nlines"), EntryID("three")}; !slices.Equal(got, want) {
		t.Errorf("all = %v, want %v", got, want)
	}
	if got, want := EntryIDsInLines(data, 4, 4), []string{EntryID("two\nlines")}; !slices.Equal(got, want) {
		t.Errorf("line 4 = %v, want %v", got, want)
	}
	if got := EntryIDsInLines(data, 2, 2); len(got) != 0 {
		t.Errorf("separator line = %v", got)
	}
}

func TestRecallOffRecordsNothing(t *testing.T) {
	v := memTestVault(t, 0, 0)
	r := Recall(v)
	r.SetEnabled(false)
	r.Record(RecallEvent{Agent: "lyra", Kind: RecallRead, Path: "projects/a.md"})
	r.SetEnabled(true)
	s, _ := LoadRecall(v)
	if n := s.File("projects/a.md").Reads; n != 0 {
		t.Errorf("recorded while off: %d", n)
	}
}

const recallHelperEnv = "NEXUS_TEST_RECALL_HELPER"

// TestRecallHelperProcess is not a test: TestRecallManyProcesses runs the
// test binary with it to get separate OS processes recording at once.
func TestRecallHelperProcess(t *testing.T) {
	spec := os.Getenv(recallHelperEnv)
	if spec == "" {
		return
	}
	dir, n, _ := strings.Cut(spec, "|")
	count, _ := strconv.Atoi(n)
	v, err := vault.Open(dir)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	r := Recall(v)
	for i := range count {
		r.Record(RecallEvent{Agent: "lyra", Kind: RecallRead, Path: "projects/shared.md"})
		switch i % 10 {
		case 0:
			if err := r.Flush(); err != nil {
				fmt.Println("error", err)
				os.Exit(3)
			}
		case 5:
			// Folds race with the writers too.
			if _, err := LoadRecall(v); err != nil {
				fmt.Println("error", err)
				os.Exit(3)
			}
		}
	}
	if err := r.Flush(); err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	fmt.Println("ok")
	os.Exit(0)
}

func TestRecallManyProcessesLoseNoCount(t *testing.T) {
	v := memTestVault(t, 0, 0)
	const procs, each = 8, 300
	var wg sync.WaitGroup
	errs := make(chan string, procs)
	for range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestRecallHelperProcess$")
			cmd.Env = append(os.Environ(), recallHelperEnv+"="+v.Root()+"|"+strconv.Itoa(each))
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "ok") {
				errs <- fmt.Sprintf("helper: %v: %s", err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	s, err := LoadRecall(v)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.File("projects/shared.md").Reads; got != procs*each {
		t.Errorf("reads = %d, want %d", got, procs*each)
	}
}

// BenchmarkFactReadRecall compares ReadFact alone with ReadFact plus the
// recall signal the faces record after it, in this process.
func BenchmarkFactReadRecall(b *testing.B) {
	v := memTestVault(b, 0, 0)
	for i := range 50 {
		if _, err := WriteFact(v, "lyra", FactInput{Name: fmt.Sprintf("fact %d", i), Description: "d", Type: FactProject, Body: "body"}, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				f, err := ReadFact(v, "lyra", "fact-"+strconv.Itoa(i%50))
				if err != nil {
					b.Fatal(err)
				}
				if on {
					RecordRead(v, "lyra", f.Path, "mcp", nil, 0, 0)
				}
			}
			b.StopTimer()
			Recall(v).Flush()
		})
	}
}

// BenchmarkRecordRead is what a read pays for its recall signal.
func BenchmarkRecordRead(b *testing.B) {
	v := memTestVault(b, 0, 0)
	p := FactPath("lyra", "staging-ssh")
	for i := 0; i < b.N; i++ {
		RecordRead(v, "lyra", p, "mcp", nil, 0, 0)
	}
	b.StopTimer()
	Recall(v).Flush()
}

// FuzzParseEvents: any recall log (torn, hostile) parses without panic and
// folds into a summary whose counts match the events kept.
func FuzzParseEvents(f *testing.F) {
	f.Add([]byte(`{"a":"lyra","k":"read","p":"x.md","t":1}` + "\n" + `{"a":"lyra","k":"hits","q":"q","h":["x.md"],"t":2}`))
	f.Add([]byte(`{"a":"lyra","k":"re`))
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs := parseEvents(data)
		s, _ := readSummary(t.TempDir())
		reads := 0
		for _, e := range evs {
			if e.Agent == "" || e.Millis <= 0 {
				t.Fatalf("kept an event without agent or time: %+v", e)
			}
			if e.Kind == RecallRead {
				reads++
			}
			s.fold(e)
		}
		total := 0
		for _, u := range s.Files {
			total += u.Reads
		}
		if total != reads {
			t.Fatalf("folded %d reads of %d", total, reads)
		}
	})
}

// FuzzPinProperty: pinning and unpinning any note keeps every other byte.
func FuzzPinProperty(f *testing.F) {
	f.Add([]byte("---\nname: a\n---\nbody\n"))
	f.Add([]byte("---\r\nname: a\r\npinned: yes\r\n---\r\nbody"))
	f.Add([]byte("no frontmatter"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if FactPinned(data) {
			out := dropProperty(data, PinnedKey)
			if FactPinned(out) && bytes.Count(data, []byte("\n"+PinnedKey)) < 2 {
				t.Fatalf("still pinned after unpin:\n%q", out)
			}
			return
		}
		pinned, err := setBoolProperty(data, PinnedKey)
		if err != nil {
			return
		}
		if _, _, ok := vault.SplitFrontmatter(data); !ok {
			return // a new block was added in front
		}
		if back := dropProperty(pinned, PinnedKey); !bytes.Equal(back, dropProperty(data, PinnedKey)) {
			t.Fatalf("pin then unpin changed other bytes:\n%q\n%q", data, back)
		}
	})
}

// TestRecallLogHit: a search hit on a log entry (PATH#LINE) followed by a
// read of its feed covering the line is a search read of that entry, for
// the reader; a read of other lines is not.
func TestRecallLogHit(t *testing.T) {
	v := memTestVault(t, 0, 0)
	feed := "log/live/2026-12/orion@vps.md"
	RecordHits(v, "lyra", "staging port", "mcp", []string{"projects/a.md", LogHit(feed, 12), LogHit(feed, 40)})
	RecordRead(v, "lyra", feed, "mcp", nil, 10, 30)
	RecordRead(v, "lyra", feed, "mcp", nil, 41, 0) // past both lines? 40 < 41: neither
	RecordHits(v, "lyra", "Staging  PORT", "cli", []string{LogHit(feed, 40)})
	RecordRead(v, "lyra", feed, "cli", nil, 1, 0) // to the end: covers 40
	s, err := LoadRecall(v)
	if err != nil {
		t.Fatal(err)
	}
	logs := s.LogEntries("lyra")
	if u := logs[LogHit(feed, 12)]; u == nil || u.SearchReads != 2 || u.Queries["staging port"] != 2 {
		t.Errorf("entry at 12: %+v", u) // the first search is still recent at the third read
	}
	if u := logs[LogHit(feed, 40)]; u == nil || u.SearchReads != 1 || u.Queries["staging port"] != 1 {
		t.Errorf("entry at 40: %+v", u)
	}
	if len(logs) != 2 {
		t.Errorf("logs %v", logs)
	}
	if u := s.File(feed); u.Reads != 3 {
		t.Errorf("feed file reads %+v", u)
	}
}
