package demo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

// TestRun plays the whole story (with fewer appends than the CLI's 500, to
// stay quick under -race) and checks what it left in the vault.
func TestRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	var out bytes.Buffer
	res, err := Run(context.Background(), Options{Dir: dir, Out: &out, Appends: 40})
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	if res.Temp || !res.Healthy || len(res.Scenes) != 6 {
		t.Errorf("result: temp %v healthy %v scenes %d", res.Temp, res.Healthy, len(res.Scenes))
	}
	if res.Decision != "lyra@demo:D-0002" || res.Superseded != "lyra@demo:D-0001" || res.ResumedAt != 7 || res.Appended != 80 {
		t.Errorf("result: %+v", res)
	}
	text := out.String()
	for _, want := range []string{
		"Scene 1 · 02:00", "Scene 6 ·", "02:00 UTC", // story clock
		"## Unread log entries (1)",
		"lyra@demo:D-0002, which supersedes lyra@demo:D-0001",
		"She resumes at step 7",
		"[[prefers-korean-first|Prefers Korean first]]",
		`memory_search "로그인 시간 초과" → log/live/`,
		"checks pass (config, conflicts, key-mode,",
		"obsidian://open?path=",
		`"args": ["serve", "--stdio", "--agent", "lyra"]`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("narration lacks %q", want)
		}
	}

	v, err := vault.Open(res.Vault)
	if err != nil {
		t.Fatal(err)
	}
	// The story's times, not today's.
	year := time.Now().UTC().Year() - 1
	if want := livelog.FeedPath("lyra@"+Device, time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)); res.HandoffPath != want {
		t.Errorf("handoff in %s, want %s", res.HandoffPath, want)
	}
	fact, err := os.ReadFile(v.MustPath(res.Fact))
	if err != nil || !strings.Contains(string(fact), "Korean first") {
		t.Errorf("approved fact %s: %v", res.Fact, err)
	}
	if _, err := os.Stat(v.MustPath("review/archive/" + res.ReviewID + ".md")); err != nil {
		t.Errorf("review item not archived: %v", err)
	}
	cp, err := livelog.LoadCheckpoint(v, Lyra)
	if err != nil || !strings.Contains(cp.State, "resumed at step 7") {
		t.Errorf("final checkpoint: %+v, %v", cp, err)
	}
	l, err := livelog.Open(v, livelog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := l.Verify(context.Background())
	if err != nil || !rep.OK(true) {
		t.Fatalf("log verify: %+v %v", rep, err)
	}
	// handoff + ella's reply + 2x40 appends, and three decisions.
	if rep.Entries != 2+80+3 {
		t.Errorf("log holds %d signed entries, want %d", rep.Entries, 2+80+3)
	}
	ds, err := l.ListDecisions(false)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range ds {
		ids = append(ids, d.ID)
	}
	if strings.Join(ids, ",") != "ella@demo:D-0001,lyra@demo:D-0002" {
		t.Errorf("current decisions %v, want ella@demo:D-0001,lyra@demo:D-0002", ids)
	}
}

func TestRunRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	note := filepath.Join(dir, "my-notes.md")
	if err := os.WriteFile(note, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), Options{Dir: dir})
	if !errors.Is(err, ErrDirNotEmpty) || !errors.Is(err, vault.ErrInvalid) {
		t.Fatalf("err = %v, want ErrDirNotEmpty", err)
	}
	if data, _ := os.ReadFile(note); string(data) != "mine" {
		t.Error("the demo touched a note in a non-empty folder")
	}
	if _, err := os.Stat(filepath.Join(dir, ".nexus")); err == nil {
		t.Error("the demo made a vault in a non-empty folder")
	}
}

func TestRunTempDir(t *testing.T) {
	tmp := t.TempDir()
	for _, k := range []string{"TMPDIR", "TMP", "TEMP"} { // os.TempDir on Unix and Windows
		t.Setenv(k, tmp)
	}
	res, err := Run(context.Background(), Options{Appends: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Temp || !strings.HasPrefix(res.Vault, tmp) && !strings.HasPrefix(res.Vault, mustEval(t, tmp)) {
		t.Errorf("vault %s (temp %v), want a folder under %s", res.Vault, res.Temp, tmp)
	}
}

func TestStoryClock(t *testing.T) {
	real := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	now := func() time.Time { return real }
	start := time.Date(2025, 1, 13, 2, 0, 0, 0, time.UTC)
	c := newStoryClock(now, start)
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("Now = %v, want %v", got, start)
	}
	real = real.Add(1500 * time.Millisecond)
	if got := c.Now(); !got.Equal(start.Add(1500 * time.Millisecond)) {
		t.Errorf("the clock does not run: %v", got)
	}
	july := time.Date(2025, 7, 6, 9, 0, 0, 0, time.UTC)
	c.set(july)
	if got := c.Now(); !got.Equal(july) {
		t.Errorf("after set: %v", got)
	}
	c.set(start) // never back
	if got := c.Now(); !got.Equal(july) {
		t.Errorf("the clock went back to %v", got)
	}
}

func TestSection(t *testing.T) {
	text := "══\nMEMORY INDEX (your fact files) [1/200 lines]\n══\n- [[a|A]] — a\n\n══\nUSER\n══\nx\n## Unread log entries (1)\n- one\n  body\n\n## Latest checkpoint\nNo checkpoint saved.\n"
	for heading, want := range map[string]string{
		"MEMORY INDEX":          "MEMORY INDEX (your fact files) [1/200 lines]\n- [[a|A]] — a",
		"## Unread log entries": "## Unread log entries (1)\n- one\n  body",
		"## Latest checkpoint":  "## Latest checkpoint\nNo checkpoint saved.",
		"## Nothing":            "",
	} {
		if got := section(text, heading); got != want {
			t.Errorf("section(%q) = %q, want %q", heading, got, want)
		}
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// BenchmarkDemo measures the whole demo as 'nexus demo' plays it (500
// appends per agent), build excluded. Target: under 10 s.
//
//	go test -run '^$' -bench Demo -benchtime 3x ./demo/
func BenchmarkDemo(b *testing.B) {
	var scene5 time.Duration
	for i := 0; i < b.N; i++ {
		res, err := Run(context.Background(), Options{Dir: filepath.Join(b.TempDir(), "demo")})
		if err != nil {
			b.Fatal(err)
		}
		scene5 += res.Scenes[4].Elapsed
	}
	b.ReportMetric(float64(scene5.Milliseconds())/float64(b.N), "scene5-ms/op")
}

// cancelAt cancels a context when the narration reaches a marker.
type cancelAt struct {
	marker string
	cancel context.CancelFunc
	buf    bytes.Buffer
}

func (c *cancelAt) Write(p []byte) (int, error) {
	c.buf.Write(p)
	if strings.Contains(c.buf.String(), c.marker) {
		c.cancel()
	}
	return len(p), nil
}

// TestRunCancelled: Ctrl-C mid-story stops the demo with the context's
// error, closes the sessions and the server, and leaves a log that
// verifies.
func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &cancelAt{marker: "Scene 3", cancel: cancel}
	dir := filepath.Join(t.TempDir(), "demo")
	res, err := Run(ctx, Options{Dir: dir, Out: w, Appends: 5})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(res.Scenes) > 2 || res.Healthy {
		t.Errorf("result after cancel: %d scenes, healthy %v", len(res.Scenes), res.Healthy)
	}
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	l, err := livelog.Open(v, livelog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := l.Verify(context.Background())
	if err != nil || !rep.OK(true) {
		t.Errorf("log after cancel: %+v %v", rep, err)
	}
}
