package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/livelog"
)

// logCLI runs one nexus invocation in-process with stdin.
func logCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// logVault makes a vault with agents lyra and ella and returns its folder.
func logVault(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if code, _, e := logCLI(t, "", "init", dir); code != 0 {
		t.Fatalf("init: %s", e)
	}
	if code, _, e := logCLI(t, "", "--vault", dir, "device", "name", "box"); code != 0 {
		t.Fatalf("device name: %s", e)
	}
	for _, a := range []string{"lyra", "ella"} {
		if code, _, e := logCLI(t, "", "--vault", dir, "agent", "add", a); code != 0 {
			t.Fatalf("agent add: %s", e)
		}
	}
	return dir
}

type cliEntry struct {
	Agent, Channel, Kind, Summary, Body string
	Signed, Hand                        bool
}

func TestLogCommands(t *testing.T) {
	dir := logVault(t)
	must := func(want int, stdin string, args ...string) string {
		t.Helper()
		code, out, errs := logCLI(t, stdin, append([]string{"--vault", dir}, args...)...)
		if code != want {
			t.Fatalf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", args, code, want, out, errs)
		}
		return out
	}
	out := must(0, "", "--agent", "lyra", "--json", "log", "append", "--channel", "deploy", "--kind", "shipped", "Fixed login timeout;", "PR #123 merged", "--body", "longer text")
	var ar struct {
		Entry cliEntry
		Notes []string
	}
	if err := json.Unmarshal([]byte(out), &ar); err != nil || ar.Entry.Summary != "Fixed login timeout; PR #123 merged" || ar.Entry.Body != "longer text" || !ar.Entry.Signed {
		t.Fatalf("append result %s (%v)", out, err)
	}
	out = must(0, "", "--agent", "lyra", "--json", "log", "append", "multi\nline summary")
	if !strings.Contains(out, "summary folded to one line") {
		t.Fatalf("fold not reported: %s", out)
	}
	must(0, "body from stdin\n", "--agent", "ella", "log", "append", "--body-file", "-", "ella's note")

	// Unread for ella: lyra's two entries, not her own.
	var rr struct {
		Count   int
		Acked   bool
		Entries []cliEntry
	}
	out = must(0, "", "--agent", "ella", "--json", "log", "read", "--unread", "--ack")
	if err := json.Unmarshal([]byte(out), &rr); err != nil || rr.Count != 2 || !rr.Acked || rr.Entries[0].Agent != "lyra" {
		t.Fatalf("unread: %s", out)
	}
	out = must(0, "", "--agent", "ella", "log", "read", "--unread")
	if !strings.Contains(out, "Nothing new for ella") {
		t.Fatalf("after ack: %s", out)
	}
	// SPEC wording: --agent filters by author when not --unread.
	out = must(0, "", "--agent", "ella", "--json", "log", "read", "--last", "20")
	json.Unmarshal([]byte(out), &rr)
	if rr.Count != 1 || rr.Entries[0].Summary != "ella's note" || rr.Entries[0].Body != "body from stdin" {
		t.Fatalf("--agent filter: %s", out)
	}
	out = must(0, "", "--json", "log", "read", "--from", "lyra", "--channel", "deploy", "--kind", "shipped", "--since", "2020-01-01")
	json.Unmarshal([]byte(out), &rr)
	if rr.Count != 1 {
		t.Fatalf("filters: %s", out)
	}
	out = must(0, "", "log", "tail", "-n", "2")
	if !strings.Contains(out, "ella [general/note] ella's note") || strings.Contains(out, "PR #123") {
		t.Fatalf("tail: %s", out)
	}
	out = must(0, "", "log", "verify")
	if !strings.Contains(out, "3 intact") || !strings.Contains(out, "OK") {
		t.Fatalf("verify: %s", out)
	}

	// Hand-typed text: exit 0, but 1 with --strict.
	seg := filepath.Join(dir, "log", "live", time.Now().UTC().Format("2006-01"), "lyra@box.md")
	f, err := os.OpenFile(seg, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("Note from a person.\n")
	f.Close()
	must(0, "", "log", "verify")
	out = must(1, "", "--json", "log", "verify", "--strict")
	if !strings.Contains(out, `"unsigned"`) {
		t.Fatalf("strict verify: %s", out)
	}
	// Tampering: exit 1 and the entry named.
	data, _ := os.ReadFile(seg)
	os.WriteFile(seg, bytes.Replace(data, []byte("PR #123"), []byte("PR #124"), 1), 0o644)
	out = must(1, "", "log", "verify")
	if !strings.Contains(out, "edited: lyra") {
		t.Fatalf("tampered verify: %s", out)
	}

	// Usage errors exit 2.
	must(2, "", "log", "append", "no agent")
	must(2, "", "--agent", "lyra", "log", "append", "--channel", "bad channel", "x")
	// A scan refusal (an invisible character) is a refused operation.
	must(1, "", "--agent", "lyra", "log", "append", "bad \u200b invisible")
	must(2, "", "--agent", "ella", "log", "read", "--ack")
	must(2, "", "log", "read", "--since", "yesterday")
	must(1, "", "--agent", "nobody", "log", "append", "no key")
	must(1, "", "--agent", "nobody", "log", "read", "--unread", "--ack")
	if _, err := os.Stat(filepath.Join(dir, ".nexus", "state", "livelog", "cursors", "nobody.json")); err == nil {
		t.Fatal("a cursor was made for an unknown agent")
	}
}

func TestDecideCommands(t *testing.T) {
	dir := logVault(t)
	must := func(want int, args ...string) string {
		t.Helper()
		code, out, errs := logCLI(t, "", append([]string{"--vault", dir}, args...)...)
		if code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, want, out, errs)
		}
		return out
	}
	out := must(0, "--agent", "lyra", "--json", "decide", "Secrets in files", "--decision", "Keep tokens in .env", "--rationale", "simple")
	if !strings.Contains(out, `"id": "lyra@box:D-0001"`) {
		t.Fatalf("decide: %s", out)
	}
	must(0, "--agent", "ella", "decide", "Secrets live in the OS keychain", "--decision", "Use the keychain", "--rationale", "vault syncs to phones", "--supersedes", "lyra@box:D-0001")
	must(1, "--agent", "ella", "decide", "x", "--decision", "y", "--supersedes", "lyra@box:D-0042")
	must(2, "--agent", "ella", "decide", "x")
	var doc struct {
		Decisions []struct {
			ID           string
			Title        string
			SupersededBy string `json:"superseded_by"`
		}
	}
	json.Unmarshal([]byte(must(0, "--json", "decisions")), &doc)
	ds := doc.Decisions
	if len(ds) != 1 || ds[0].ID != "ella@box:D-0001" {
		t.Fatalf("current decisions %+v", ds)
	}
	out = must(0, "decisions", "--all")
	if !strings.Contains(out, "lyra@box:D-0001 Secrets in files (superseded by ella@box:D-0001)") {
		t.Fatalf("decisions --all: %s", out)
	}
	must(0, "log", "verify", "--strict")
}

func TestCheckpointCommands(t *testing.T) {
	dir := logVault(t)
	must := func(want int, args ...string) string {
		t.Helper()
		code, out, errs := logCLI(t, "", append([]string{"--vault", dir}, args...)...)
		if code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, want, out, errs)
		}
		return out
	}
	must(1, "--agent", "lyra", "checkpoint", "show")
	must(2, "--agent", "lyra", "checkpoint", "save", "--state", "no task")
	must(0, "--agent", "lyra", "checkpoint", "save", "--task", "migrate db", "--state", "step 3/5 done", "--next", "run step 4", "--files", "a.go,b.sql", "--note", "backup first")
	must(0, "--agent", "lyra", "checkpoint", "save", "--task", "migrate db", "--state", "step 4/5 done", "--next", "run step 5")
	out := must(0, "--agent", "lyra", "--json", "checkpoint", "show", "--history")
	var res struct {
		Current struct{ State string }
		History []struct {
			State string
			Files []string
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Current.State != "step 4/5 done" || len(res.History) != 1 || res.History[0].State != "step 3/5 done" || len(res.History[0].Files) != 2 {
		t.Fatalf("checkpoint show: %s", out)
	}
	out = must(0, "--agent", "lyra", "checkpoint", "show")
	if !strings.Contains(out, "Next:  run step 5") {
		t.Fatalf("human show: %s", out)
	}
}

func TestLogHelp(t *testing.T) {
	for _, args := range [][]string{{"log", "append", "--help"}, {"log", "read", "--help"}, {"log", "verify", "--help"}, {"log", "tail", "--help"}, {"decide", "--help"}, {"decisions", "--help"}, {"checkpoint", "save", "--help"}, {"checkpoint", "show", "--help"}} {
		code, out, _ := logCLI(t, "", args...)
		if code != 0 || !strings.Contains(out, "Example") {
			t.Errorf("%v: exit %d, no example in help:\n%s", args, code, out)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLogTailFollow(t *testing.T) {
	dir := logVault(t)
	if code, _, e := logCLI(t, "", "--vault", dir, "--agent", "lyra", "log", "append", "old entry"); code != 0 {
		t.Fatal(e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--vault", dir, "--json", "log", "tail", "-f", "-n", "1"}, strings.NewReader(""), &out, &errb)
	}()
	// Wait for tail to print the old entry before appending, so that the
	// new one can only come through -f.
	for i := 0; !strings.Contains(out.String(), "old entry"); i++ {
		if i > 5000 {
			t.Fatalf("tail printed nothing: %s %s", out.String(), errb.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	for i := 0; !strings.Contains(out.String(), "fresh entry"); i++ {
		if i%50 == 0 {
			if code, _, e := logCLI(t, "", "--vault", dir, "--agent", "ella", "log", "append", "fresh entry"); code != 0 {
				t.Fatal(e)
			}
		}
		if i > 5000 {
			t.Fatalf("tail -f printed nothing new: %s", out.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("tail -f exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var first cliEntry
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Summary != "old entry" {
		t.Fatalf("first line %q: %v", lines[0], err)
	}
}

// TestVerifyFindingLines: a finding names only what it knows; no "-" or
// ":0" placeholders and no empty quotes.
func TestVerifyFindingLines(t *testing.T) {
	for _, tc := range []struct {
		f    livelog.Finding
		want string
	}{
		{livelog.Finding{Status: livelog.StatusRemoved, Writer: "lyra@vm", Seq: 1, Detail: "every entry of lyra@vm is gone"},
			`removed: lyra@vm#1 — every entry of lyra@vm is gone`},
		{livelog.Finding{Status: livelog.StatusEdited, File: "log/live/2026-12/lyra@vm.md", Line: 4, Writer: "lyra@vm", Seq: 2, Summary: "배포 완료", Detail: "signature does not match"},
			`log/live/2026-12/lyra@vm.md:4: edited: lyra@vm#2 "배포 완료" — signature does not match`},
		{livelog.Finding{Status: livelog.StatusUnsigned, File: "log/live/2026-12.md", Detail: "hand-typed text"},
			`log/live/2026-12.md: unsigned — hand-typed text`},
		{livelog.Finding{Status: livelog.StatusTruncated, Agent: "ella"}, `truncated: ella`},
	} {
		if got := verifyFindingLine(tc.f); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

// TestVerifyEmptiedFeed: a feed emptied by hand is reported as removed
// entries, in plain words.
func TestVerifyEmptiedFeed(t *testing.T) {
	dir := logVault(t)
	for _, s := range []string{"one", "two"} {
		if code, _, errs := logCLI(t, "", "--vault", dir, "--agent", "lyra", "log", "append", s); code != 0 {
			t.Fatal(errs)
		}
	}
	feeds, _ := filepath.Glob(filepath.Join(dir, "log", "live", "*", "lyra@*.md"))
	if len(feeds) != 1 {
		t.Fatalf("feeds %v", feeds)
	}
	if err := os.WriteFile(feeds[0], nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := logCLI(t, "", "--vault", dir, "log", "verify")
	if code != exitRefused || !strings.Contains(out, "removed: lyra@") {
		t.Fatalf("verify of an emptied feed: %d\n%s", code, out)
	}
	for _, bad := range []string{`""`, "-: ", ":0:"} {
		if strings.Contains(out, bad) {
			t.Errorf("verify output has %q:\n%s", bad, out)
		}
	}
}

// TestAckCountInWords: "1 entry acknowledged", "2 entries acknowledged".
func TestAckCountInWords(t *testing.T) {
	dir := logVault(t)
	for _, step := range []struct {
		append []string
		want   string
	}{
		{[]string{"one"}, "(1 entry acknowledged for ella)\n"},
		{[]string{"two", "three"}, "(2 entries acknowledged for ella)\n"},
	} {
		for _, s := range step.append {
			if code, _, errs := logCLI(t, "", "--vault", dir, "--agent", "lyra", "log", "append", s); code != 0 {
				t.Fatal(errs)
			}
		}
		code, out, errs := logCLI(t, "", "--vault", dir, "--agent", "ella", "log", "read", "--unread", "--ack")
		if code != 0 || !strings.HasSuffix(out, step.want) {
			t.Errorf("read --unread --ack: %d\n%s%s", code, out, errs)
		}
	}
}
