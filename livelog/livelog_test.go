package livelog

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)} }

// mustVault makes a vault with agents lyra, ella and mallory.
func mustVault(tb testing.TB) *vault.Vault {
	tb.Helper()
	v, _, err := vault.Init(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	if err := v.SetDevice(testDevice); err != nil {
		tb.Fatal(err)
	}
	for _, n := range []string{"lyra", "ella", "mallory"} {
		if _, err := identity.Create(v, n, "test agent", time.Now()); err != nil {
			tb.Fatal(err)
		}
	}
	return v
}

func mustLog(tb testing.TB, v *vault.Vault) *Log {
	tb.Helper()
	l, err := Open(v, Options{Now: newClock().Now})
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

func mustAppend(tb testing.TB, l *Log, agent, summary string) Entry {
	tb.Helper()
	e, err := l.Append(agent, Entry{Channel: "deploy", Kind: "shipped", Summary: summary})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func mustVerify(tb testing.TB, l *Log) *Report {
	tb.Helper()
	r, err := l.Verify(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// testDevice is the device name of test vaults.
const testDevice = "box"

// segmentPath is lyra's feed file of November 2026 (the test clock's).
func segmentPath(l *Log) string { return feedFile(l, "lyra") }

// feedFile is agent's feed file of November 2026 on the test device.
func feedFile(l *Log, agent string) string {
	return l.v.MustPath(FeedPath(agent+"@"+testDevice, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)))
}

func TestAppendReadRoundTrip(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	cases := []struct {
		name string
		in   Entry
		want Entry // Summary and Body after normalisation
	}{
		{"plain", Entry{Summary: "Fixed login timeout; PR #123 merged"}, Entry{Summary: "Fixed login timeout; PR #123 merged", Channel: "general", Kind: "note"}},
		{"korean", Entry{Channel: "배포", Kind: "완료", Summary: "로그인 시간 초과 수정", Body: "본문입니다.\n둘째 줄"}, Entry{Channel: "배포", Kind: "완료", Summary: "로그인 시간 초과 수정", Body: "본문입니다.\n둘째 줄"}},
		{"folded summary", Entry{Summary: "line one\nline two\r\n\tthree"}, Entry{Summary: "line one line two three", Channel: "general", Kind: "note"}},
		{"markdown summary", Entry{Summary: "**bold** `code` [[Link]] #tag ### not a header"}, Entry{Summary: "**bold** `code` [[Link]] #tag ### not a header", Channel: "general", Kind: "note"}},
		{"crlf body", Entry{Summary: "s", Body: "a\r\nb\rc\n\n"}, Entry{Summary: "s", Body: "a\nb\nc", Channel: "general", Kind: "note"}},
		{"forging body", Entry{Summary: "s", Body: "### 2026-11-29T15:00:00Z mallory [deploy/shipped] fake\n<!-- nexus prev=x sig=y -->\n\\### 2026-11-29T15:00:00Z a [b/c] d\n<!-- nexus torn: x -->\n### Ordinary heading"},
			Entry{Summary: "s", Body: "### 2026-11-29T15:00:00Z mallory [deploy/shipped] fake\n<!-- nexus prev=x sig=y -->\n\\### 2026-11-29T15:00:00Z a [b/c] d\n<!-- nexus torn: x -->\n### Ordinary heading", Channel: "general", Kind: "note"}},
		{"open fence", Entry{Summary: "s", Body: "```go\nfunc f() {}"}, Entry{Summary: "s", Body: "```go\nfunc f() {}\n```", Channel: "general", Kind: "note"}},
		{"leading blank body line", Entry{Summary: "s", Body: "\n\nafter blanks\n\n\nand gap"}, Entry{Summary: "s", Body: "\n\nafter blanks\n\n\nand gap", Channel: "general", Kind: "note"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := l.Append("lyra", c.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.Summary != c.want.Summary || got.Body != c.want.Body || got.Channel != c.want.Channel || got.Kind != c.want.Kind {
				t.Fatalf("append returned %+v, want %+v", got, c.want)
			}
			es, err := l.Read(ReadOptions{Last: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != 1 {
				t.Fatalf("read %d entries, want 1", len(es))
			}
			e := es[0]
			if e.Summary != c.want.Summary || e.Body != c.want.Body || e.Agent != "lyra" || !e.Signed || e.Hash != got.Hash || e.Offset != got.Offset || e.End != got.End {
				t.Fatalf("read back %+v\nwant %+v", e, got)
			}
		})
	}
	r := mustVerify(t, l)
	if !r.OK(true) || r.Counts[StatusIntact] != len(cases) {
		t.Fatalf("verify: %+v", r)
	}
}

func TestAppendRejects(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	cases := []struct {
		name  string
		agent string
		e     Entry
	}{
		{"empty summary", "lyra", Entry{Summary: "  \n "}},
		{"invalid utf8 summary", "lyra", Entry{Summary: "bad \xff"}},
		{"invalid utf8 body", "lyra", Entry{Summary: "s", Body: "bad \xfe"}},
		{"nul", "lyra", Entry{Summary: "a\x00b"}},
		{"long summary", "lyra", Entry{Summary: strings.Repeat("가", MaxSummaryRunes+1)}},
		{"huge body", "lyra", Entry{Summary: "s", Body: strings.Repeat("x", MaxBodyBytes+1)}},
		{"bad channel", "lyra", Entry{Channel: "de ploy", Summary: "s"}},
		{"slash kind", "lyra", Entry{Kind: "a/b", Summary: "s"}},
		{"bracket channel", "lyra", Entry{Channel: "a]", Summary: "s"}},
		{"bad agent", "../x", Entry{Summary: "s"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := l.Append(c.agent, c.e)
			if !errors.Is(err, vault.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
		})
	}
	if _, err := l.Append("nobody", Entry{Summary: "s"}); err == nil {
		t.Fatal("agent without a key could append")
	}
	segs, _ := l.segments()
	if len(segs) != 0 {
		t.Fatalf("rejected appends wrote %v", segs)
	}
	// A summary of exactly the limit in Korean, and a 1 MiB body, are fine.
	big := strings.Repeat("한", MaxSummaryRunes)
	body := strings.Repeat("x", MaxBodyBytes-1) + "\n"
	e, err := l.Append("lyra", Entry{Summary: big, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	es, err := l.Read(ReadOptions{Last: 1})
	if err != nil || len(es) != 1 || es[0].Summary != big || len(es[0].Body) != MaxBodyBytes-1 || es[0].Hash != e.Hash {
		t.Fatalf("big entry did not round-trip: %v", err)
	}
	if r := mustVerify(t, l); !r.OK(true) {
		t.Fatalf("verify: %+v", r.Findings)
	}
}

func TestReadFilters(t *testing.T) {
	v := mustVault(t)
	c := newClock()
	l, _ := Open(v, Options{Now: c.Now})
	for i := range 30 {
		agent := []string{"lyra", "ella"}[i%2]
		kind := []string{"shipped", "note", "question"}[i%3]
		if _, err := l.Append(agent, Entry{Channel: fmt.Sprintf("ch%d", i%4), Kind: kind, Summary: fmt.Sprintf("entry %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	since := time.Date(2026, 11, 29, 15, 0, 20, 0, time.UTC)
	cases := []struct {
		name string
		o    ReadOptions
		want []int
	}{
		{"last 3", ReadOptions{Last: 3}, []int{27, 28, 29}},
		{"from ella last 2", ReadOptions{Last: 2, From: "ella"}, []int{27, 29}},
		{"channel ch1 kind note", ReadOptions{Channel: "ch1", Kind: "note"}, []int{1, 13, 25}},
		{"since", ReadOptions{Since: since, From: "lyra"}, []int{20, 22, 24, 26, 28}},
		{"all", ReadOptions{}, seq(30)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			es, err := l.Read(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, e := range es {
				var n int
				fmt.Sscanf(e.Summary, "entry %d", &n)
				got = append(got, n)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func TestUnreadAndAck(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	mustAppend(t, l, "lyra", "one")
	mustAppend(t, l, "ella", "own entry")
	mustAppend(t, l, "lyra", "two")
	es, err := l.Unread("ella")
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Summary != "one" || es[1].Summary != "two" {
		t.Fatalf("unread = %v", summaries(es))
	}
	n, by, err := l.UnreadCount("ella")
	if err != nil || n != 2 || by["lyra"] != 2 {
		t.Fatalf("count = %d %v %v", n, by, err)
	}
	if err := l.Ack("ella", es[0]); err != nil {
		t.Fatal(err)
	}
	es, _ = l.Unread("ella")
	if len(es) != 1 || es[0].Summary != "two" {
		t.Fatalf("after ack of one: %v", summaries(es))
	}
	// Acking an older entry does not move the cursor back.
	all, _ := l.Read(ReadOptions{})
	if err := l.Ack("ella", es[0]); err != nil {
		t.Fatal(err)
	}
	if err := l.Ack("ella", all[0]); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := l.UnreadCount("ella"); n != 0 {
		t.Fatalf("cursor moved back: %d unread", n)
	}
	// Hand-typed text at the end is unread too, and shown.
	appendRaw(t, segmentPath(l), "A person wrote this paragraph.\nSecond line.\n")
	es, _ = l.ReadUnread("ella", true)
	if len(es) != 1 || !es[0].Hand || es[0].Summary != "A person wrote this paragraph." {
		t.Fatalf("hand text: %+v", es)
	}
	if n, _, _ := l.UnreadCount("ella"); n != 0 {
		t.Fatalf("after ReadUnread ack: %d unread", n)
	}
	mustAppend(t, l, "lyra", "three")
	es, _ = l.Unread("ella")
	if len(es) != 1 || es[0].Summary != "three" {
		t.Fatalf("after hand text: %v", summaries(es))
	}
	// A person edits the file before the cursor (longer summary): the
	// cursor is re-placed by its chain hash and nothing is seen twice.
	if err := l.Ack("ella", es[0]); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, "lyra", "four")
	editFile(t, segmentPath(l), "] one\n", "] one, edited by a person\n")
	es, err = l.Unread("ella")
	if err != nil || len(es) != 1 || es[0].Summary != "four" {
		t.Fatalf("after edit before cursor: %v %v", summaries(es), err)
	}
}

func summaries(es []Entry) []string {
	var s []string
	for _, e := range es {
		s = append(s, e.Summary)
	}
	return s
}

func appendRaw(tb testing.TB, path, text string) {
	tb.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		tb.Fatal(err)
	}
}

func editFile(tb testing.TB, path, old, new string) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		tb.Fatalf("%q not in %s", old, path)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// TestUnreadHoldsPartialRecord: readers take no lock, so they may see part
// of a record being written; it is held back, not delivered or acked half.
func TestUnreadHoldsPartialRecord(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	first := mustAppend(t, l, "lyra", "complete")
	s, err := identity.LoadSigner(v, "lyra")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 15, 30, 0, 0, time.UTC)
	e := Entry{Time: now, timeText: now.Format(timeLayout), Agent: "lyra", Channel: "deploy", Kind: "note", Summary: "arriving", Body: "line one\nline two",
		stream: streamLive, feed: true, Writer: "lyra@" + testDevice, Seq: 2}
	prev, _ := parseHash(first.Hash)
	e.sign(s, prev)
	rec := string(e.record())
	for _, cut := range []int{10, strings.Index(rec, "line two"), strings.Index(rec, "<!--") + 20} {
		path := segmentPath(l)
		before, _ := os.ReadFile(path)
		appendRaw(t, path, rec[:cut])
		es, err := l.ReadUnread("ella", true)
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range es {
			if got.Summary != "complete" {
				t.Fatalf("cut %d: partial record delivered: %+v", cut, got)
			}
		}
		os.WriteFile(path, before, 0o644)
	}
	appendRaw(t, segmentPath(l), rec)
	es, err := l.ReadUnread("ella", true)
	if err != nil || len(es) != 1 || es[0].Summary != "arriving" || !es[0].Signed || es[0].Body != "line one\nline two" {
		t.Fatalf("whole record: %+v %v", es, err)
	}
	if r := mustVerify(t, l); !r.OK(true) || r.Counts[StatusIntact] != 2 {
		t.Fatalf("verify %v", r.Counts)
	}
}

func TestFollow(t *testing.T) {
	v := mustVault(t)
	l, _ := Open(v, Options{Now: newClock().Now, PollInterval: time.Millisecond})
	mustAppend(t, l, "lyra", "before follow")
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan Entry, 10)
	done := make(chan error, 1)
	go func() {
		done <- l.Follow(ctx, func(e Entry) error {
			got <- e
			return nil
		})
	}()
	// Follow starts at the end: append until it has seen entries, then
	// check it saw each once, in order, and never the earlier one.
	var seen []string
	for i := 0; len(seen) < 3; i++ {
		mustAppend(t, l, "ella", fmt.Sprintf("live %d", i))
		select {
		case e := <-got:
			seen = append(seen, e.Summary)
		case <-time.After(time.Millisecond):
		}
		if i > 10000 {
			t.Fatal("follow delivered nothing")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(got)
	for e := range got {
		seen = append(seen, e.Summary)
	}
	var first int
	fmt.Sscanf(seen[0], "live %d", &first)
	for i, s := range seen {
		if s != fmt.Sprintf("live %d", first+i) {
			t.Fatalf("follow order %v", seen)
		}
	}
	// An error from fn stops Follow and is returned.
	stop := errors.New("stop")
	mustAppend(t, l, "lyra", "x")
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	errc := make(chan error, 1)
	go func() { errc <- l.Follow(ctx2, func(Entry) error { return stop }) }()
	for i := 0; ; i++ {
		mustAppend(t, l, "lyra", "y")
		select {
		case err := <-errc:
			if !errors.Is(err, stop) {
				t.Fatalf("follow returned %v", err)
			}
			return
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// TestHostileState: positions from callers and from state files a person
// (or a bug) damaged never leave the log folder or crash.
func TestHostileState(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	mustAppend(t, l, "lyra", "one")
	for _, seg := range []string{"../../etc/passwd", "log/live/../../x.md", "log/live/2026-13.md", ""} {
		if err := l.Ack("ella", Entry{Segment: seg, End: 10}); !errors.Is(err, vault.ErrInvalid) {
			t.Fatalf("ack %q: %v", seg, err)
		}
	}
	os.MkdirAll(v.MustPath(cursorsDir), 0o755)
	for _, junk := range []string{`{"segment":"log/live/2026-11.md","offset":3,"head":"abc"}`, `{"segment":"../../etc/passwd","offset":3}`, `{"segment":"log/live/2026-11.md","offset":-5}`, `not json`, `{"segment":"log/live/2026-11.md","offset":99999999}`} {
		os.WriteFile(v.MustPath(cursorPath("ella")), []byte(junk), 0o644)
		os.WriteFile(v.MustPath(headFile), []byte(junk), 0o644)
		es, err := l.Unread("ella")
		if err != nil || len(es) != 1 || es[0].Summary != "one" {
			t.Fatalf("cursor %s: %v %v", junk, summaries(es), err)
		}
		if r := mustVerify(t, l); !r.OK(true) {
			t.Fatalf("head %s: verify %+v", junk, r.Findings)
		}
	}
	mustAppend(t, l, "lyra", "two")
	if r := mustVerify(t, l); !r.OK(true) || r.Counts[StatusIntact] != 2 {
		t.Fatalf("verify %v %+v", r.Counts, r.Findings)
	}
}

// TestUnreadCountCache: a Log's running count always equals a fresh count,
// whatever happens in between.
func TestUnreadCountCache(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { unreadCountCache(t, seed) })
	}
}

func unreadCountCache(t *testing.T, seed uint64) {
	v := mustVault(t)
	l := mustLog(t, v)
	rng := rand.New(rand.NewPCG(seed, 2))
	for step := range 150 {
		switch op := rng.IntN(10); {
		case op < 4:
			mustAppend(t, l, []string{"lyra", "ella", "mallory"}[rng.IntN(3)], fmt.Sprintf("step %d", step))
		case op == 4:
			appendRaw(t, segmentPath(l), fmt.Sprintf("hand %d", step)) // no newline: a person still typing
		case op == 5:
			appendRaw(t, segmentPath(l), " more\n\n")
		case op == 6:
			if _, err := l.ReadUnread("ella", true); err != nil {
				t.Fatal(err)
			}
		case op == 7 && step > 20:
			data, _ := os.ReadFile(segmentPath(l))
			if i := strings.Index(string(data), "] step "); i > 0 {
				editFile(t, segmentPath(l), string(data[i:i+7]), "] Step ") // same length
			}
		case op == 8 && step > 20:
			data, _ := os.ReadFile(segmentPath(l))
			if i := strings.Index(string(data), "] step "); i > 0 {
				editFile(t, segmentPath(l), string(data[i:i+7]), "] edited step ") // longer
			}
		}
		got, gotBy, err := l.UnreadCount("ella")
		if err != nil {
			t.Fatal(err)
		}
		fresh := mustLog(t, v)
		want, wantBy, _ := fresh.UnreadCount("ella")
		es, _ := fresh.Unread("ella")
		if got != want || fmt.Sprint(gotBy) != fmt.Sprint(wantBy) || want != len(es) {
			t.Fatalf("step %d: cached count %d %v, fresh %d %v, unread %d", step, got, gotBy, want, wantBy, len(es))
		}
	}
}

// TestConcurrentGoroutines: one Log shared by many goroutines.
func TestConcurrentGoroutines(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				if _, err := l.Append([]string{"lyra", "ella"}[g%2], Entry{Summary: fmt.Sprintf("g%d n%d", g, i)}); err != nil {
					t.Error(err)
					return
				}
				if i%10 == 0 {
					if _, _, err := l.UnreadCount("mallory"); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if r := mustVerify(t, l); !r.OK(true) || r.Counts[StatusIntact] != 320 {
		t.Fatalf("verify %v %+v", r.Counts, r.Findings)
	}
	if n, _, _ := l.UnreadCount("mallory"); n != 320 {
		t.Fatalf("mallory has %d unread", n)
	}
}

// TestSegments: a feed runs across monthly files; an entry goes to the
// file of its own month, so a clock that ran ahead once (a future-dated
// entry) does not pull later entries into a later month.
func TestSegments(t *testing.T) {
	v := mustVault(t)
	c := &clock{t: time.Date(2026, 11, 30, 23, 59, 56, 0, time.UTC)}
	l, _ := Open(v, Options{Now: c.Now})
	for i := range 6 {
		if i == 3 {
			// A person's own file in the new month, before any entry.
			appendRaw(t, v.MustPath("log/live/2026-12/ella-notes.md"), "December notes\n")
		}
		mustAppend(t, l, []string{"lyra", "ella"}[i%2], fmt.Sprintf("e%d", i))
	}
	// The clock jumps a year ahead once, then back.
	c.t = time.Date(2027, 12, 1, 0, 0, 0, 0, time.UTC)
	mustAppend(t, l, "lyra", "future-dated")
	c.t = time.Date(2026, 12, 1, 0, 1, 0, 0, time.UTC)
	e := mustAppend(t, l, "lyra", "clock fixed")
	if e.Segment != "log/live/2026-12/lyra@box.md" || e.Seq != 5 {
		t.Fatalf("appended to %s as seq %d", e.Segment, e.Seq)
	}
	// Without the feed hint the feed's head is found by a scan.
	os.RemoveAll(v.MustPath(StateDir + "/feeds"))
	e = mustAppend(t, l, "lyra", "after hint lost")
	if e.Seq != 6 {
		t.Fatalf("seq after hint lost %d", e.Seq)
	}
	mustAppend(t, l, "ella", "ella in december")
	r := mustVerify(t, l)
	if !r.OK(false) || r.Counts[StatusIntact] != 10 || r.Counts[StatusUnsigned] != 1 {
		t.Fatalf("verify %v %+v %v", r.Counts, r.Findings, r.Files)
	}
	es, _ := l.Read(ReadOptions{Last: 3})
	if fmt.Sprint(summaries(es)) != "[clock fixed after hint lost ella in december]" {
		t.Fatalf("last 3 %v", summaries(es))
	}
	es, _ = l.Read(ReadOptions{})
	if fmt.Sprint(summaries(es)) != "[e0 e1 e2 December notes e3 e4 e5 future-dated clock fixed after hint lost ella in december]" {
		t.Fatalf("all, merged %v", summaries(es))
	}
	es, _ = l.Read(ReadOptions{Since: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), From: "lyra"})
	if fmt.Sprint(summaries(es)) != "[e4 future-dated clock fixed after hint lost]" {
		t.Fatalf("since December from lyra: %v", summaries(es))
	}
	un, _ := l.Unread("mallory")
	if len(un) != 11 {
		t.Fatalf("mallory unread %d: %v", len(un), summaries(un))
	}
	l.Ack("mallory", un[2])
	un, _ = l.Unread("mallory")
	if len(un) != 8 || un[0].Summary != "December notes" {
		t.Fatalf("after ack across months: %v", summaries(un))
	}
}

// TestUnreadSmallChunks: reading in chunks smaller than entries gives the
// same blocks, counts and cursor moves.
func TestUnreadSmallChunks(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	for i := range 40 {
		mustAppend(t, l, []string{"lyra", "ella"}[i%2], fmt.Sprintf("entry %d %s", i, strings.Repeat("x", i*7)))
		if i%9 == 0 {
			appendRaw(t, segmentPath(l), fmt.Sprintf("hand %d\n\n\n", i))
		}
	}
	appendRaw(t, segmentPath(l), "### 2026-11-29T16:00:00Z lyra [a/b] half written\nbody\n")
	want, _ := l.Unread("mallory")
	wn, wby, _ := mustLog(t, v).UnreadCount("mallory")
	defer func(old int64) { verifyChunk = old }(verifyChunk)
	for _, chunk := range []int64{50, 97, 333} {
		verifyChunk = chunk
		got, err := l.Unread("mallory")
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("chunk %d: %d blocks (%v), want %d", chunk, len(got), err, len(want))
		}
		n, by, _ := mustLog(t, v).UnreadCount("mallory")
		if n != wn || fmt.Sprint(by) != fmt.Sprint(wby) || n != 45 {
			t.Fatalf("chunk %d: count %d %v, want %d %v", chunk, n, by, wn, wby)
		}
	}
}

// TestLabelsNFC: a channel typed in decomposed Hangul matches the
// composed form.
func TestLabelsNFC(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	nfd := "\u1107\u1162\u1111\u1169" // 배포 decomposed
	if _, err := l.Append("lyra", Entry{Channel: nfd, Summary: "decomposed"}); err != nil {
		t.Fatal(err)
	}
	es, err := l.Read(ReadOptions{Channel: "배포"})
	if err != nil || len(es) != 1 || es[0].Channel != "배포" {
		t.Fatalf("read by composed channel: %+v %v", es, err)
	}
	if es, _ := l.Read(ReadOptions{Channel: nfd}); len(es) != 1 {
		t.Fatal("read by decomposed channel found nothing")
	}
}
