package index

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/search/query"
	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/index/holder"
	"github.com/nexus-memory/nexus/index/indextest"
	"github.com/nexus-memory/nexus/vault"
)

// mustVault makes a vault in a temp folder with the given files.
func mustVault(tb testing.TB, files map[string]string) *vault.Vault {
	tb.Helper()
	dir := tb.TempDir()
	v, _, err := vault.Init(dir)
	if err != nil {
		tb.Fatal(err)
	}
	for rel, text := range files {
		writeFile(tb, v, rel, text)
	}
	return v
}

func writeFile(tb testing.TB, v *vault.Vault, rel, text string) {
	tb.Helper()
	p := filepath.Join(v.Root(), filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func mustOpen(tb testing.TB, v *vault.Vault, o Options) *Index {
	tb.Helper()
	ix, err := Open(v, o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ix.Close() })
	return ix
}

func mustSearch(tb testing.TB, ix *Index, q Query) *Results {
	tb.Helper()
	res, err := ix.Search(context.Background(), q)
	if err != nil {
		tb.Fatalf("search %+v: %v", q, err)
	}
	return res
}

func paths(res *Results) []string {
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Path)
	}
	return out
}

func TestNeedles(t *testing.T) {
	dir := t.TempDir()
	gv, err := indextest.Generate(dir, indextest.Options{Notes: 300, Seed: 7, Needles: true, Big: 1})
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := vault.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	ix := mustOpen(t, v, Options{})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, n := range gv.Needles {
		t.Run(n.Query, func(t *testing.T) {
			res := mustSearch(t, ix, Query{Text: n.Query, Limit: 3})
			if len(res.Hits) == 0 || res.Hits[0].Path != n.Path {
				t.Errorf("needle %q (common=%v korean=%v): want %s first, got %v", n.Query, n.Common, n.Korean, n.Path, paths(res))
			}
		})
	}
}

func TestFindsByFields(t *testing.T) {
	v := mustVault(t, map[string]string{
		"projects/staging.md":         "---\naliases: [stage box, 스테이징]\ntags: [infra, net/vpn]\ntype: Reference\nagent: Lyra\nupdated: 2026-10-05\n---\n# Staging server\n\nThe ssh port is 2222. Talk to [[Network Team]] first.\n",
		"people/Network Team.md":      "# Network Team\n\nThey own the routers.\n",
		"notes/ko.md":                 "---\ntags: 배포\n---\n# 배포 기록\n\n어제 배포를 시작했고 배포가 실패했다. 원인은 설정이다.\n",
		"notes/other.md":              "---\ncreated: 2025-01-01\n---\nNothing about servers, only an inline #Misc tag and `#notatag` code.\n",
		"agents/orion/memory/fact.md": "---\ntype: feedback\n---\nDeploy on fridays is risky.\n",
	})
	ix := mustOpen(t, v, Options{})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		q     Query
		first string
		none  bool
	}{
		{"title word", Query{Text: "staging"}, "projects/staging.md", false},
		{"alias", Query{Text: "stage box"}, "projects/staging.md", false},
		{"korean alias", Query{Text: "스테이징"}, "projects/staging.md", false},
		{"tag as text", Query{Text: "vpn"}, "projects/staging.md", false},
		{"tag filter", Query{Text: "port", Tag: "#INFRA"}, "projects/staging.md", false},
		{"nested tag filter", Query{Text: "port", Tag: "net/vpn"}, "projects/staging.md", false},
		{"parent tag finds nested tag", Query{Text: "port", Tag: "net"}, "projects/staging.md", false},
		{"tag prefix is not a parent", Query{Text: "port", Tag: "ne"}, "", true},
		{"inline tag filter", Query{Text: "servers", Tag: "misc"}, "notes/other.md", false},
		{"code is no tag", Query{Text: "servers", Tag: "notatag"}, "", true},
		{"wikilink target title", Query{Text: "network team"}, "people/Network Team.md", false},
		{"korean particle 를", Query{Text: "배포"}, "notes/ko.md", false},
		{"korean particle 가", Query{Text: "실패"}, "notes/ko.md", false},
		{"stemming", Query{Text: "routing servers"}, "", false},
		{"all words first", Query{Text: "team ssh"}, "projects/staging.md", false},
		{"words over fields", Query{Text: "staging 2222 vpn"}, "projects/staging.md", false},
		{"fallback to any word", Query{Text: "routers zzyzx"}, "people/Network Team.md", false},
		{"phrase", Query{Text: `"ssh port"`}, "projects/staging.md", false},
		{"phrase absent", Query{Text: `"port ssh"`}, "", true},
		{"title:", Query{Text: "title:staging"}, "projects/staging.md", false},
		{"title: miss", Query{Text: "title:routers"}, "", true},
		{"exclude", Query{Text: "servers -ssh"}, "notes/other.md", false},
		{"agent filter case", Query{Text: "ssh", Agent: "LYRA"}, "projects/staging.md", false},
		{"agent from path", Query{Text: "deploy", Agent: "orion"}, "agents/orion/memory/fact.md", false},
		{"agent filter miss", Query{Text: "ssh", Agent: "orion"}, "", true},
		{"type filter", Query{Text: "ssh", Type: "reference"}, "projects/staging.md", false},
		{"inline filters", Query{Text: "ssh type:reference agent:lyra path:projects/"}, "projects/staging.md", false},
		{"path prefix", Query{Text: "ssh", PathPrefix: "people/"}, "", true},
		{"since", Query{Text: "ssh", Since: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)}, "projects/staging.md", false},
		{"until excludes", Query{Text: "ssh", Until: time.Date(2026, 9, 30, 0, 0, 0, 0, time.UTC)}, "", true},
		{"filters only", Query{Tag: "infra"}, "projects/staging.md", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustSearch(t, ix, tt.q)
			if tt.none {
				if len(res.Hits) != 0 {
					t.Fatalf("want no hits, got %v", paths(res))
				}
				return
			}
			if len(res.Hits) == 0 {
				t.Fatalf("no hits")
			}
			if tt.first != "" && res.Hits[0].Path != tt.first {
				t.Fatalf("first hit %s, want %s (all %v)", res.Hits[0].Path, tt.first, paths(res))
			}
		})
	}
	// Hits carry line, title and a highlighted snippet.
	res := mustSearch(t, ix, Query{Text: "ssh port"})
	h := res.Hits[0]
	if h.Title != "Staging server" || h.Line != 1 || !strings.Contains(h.Snippet, "**ssh**") || !strings.Contains(h.Snippet, "**port**") || h.Agent != "lyra" || h.Type != "reference" {
		t.Errorf("hit %+v", h)
	}
	if _, err := ix.Search(context.Background(), Query{Text: "  "}); err == nil {
		t.Error("empty query accepted")
	}
}

func TestSectionsAndLogEntries(t *testing.T) {
	long := "# Runbook\n\nintro text.\n\n" + strings.Repeat("filler words about nothing in particular. ", 80) + "\n\n## Rollback steps\n\nUse the zeppelin lever to roll back.\n"
	logText := "### 2026-11-02T10:00:00Z lyra [ops/incident] Canary failed\nThe canary failed on node seven.\n<!-- nexus prev=x sig=y -->\n\n### 2026-11-03T11:00:00Z orion [ops/change] Quota raised\nDisk quota raised for the wiki.\n<!-- nexus prev=x sig=y -->\n\n"
	v := mustVault(t, map[string]string{"projects/runbook.md": long, "log/live/2026-11.md": logText, "log/decisions.md": "# Decisions\n\n### 2026-11-04T09:00:00Z vega [decision/D-0001] Use bleve\nWe pick bleve for search.\n"})
	ix := mustOpen(t, v, Options{})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := mustSearch(t, ix, Query{Text: "zeppelin lever"})
	if len(res.Hits) == 0 || res.Hits[0].Line != 7 || res.Hits[0].Heading != "Rollback steps" {
		t.Fatalf("section hit %+v", res.Hits)
	}
	res = mustSearch(t, ix, Query{Text: "quota"})
	if len(res.Hits) != 1 || res.Hits[0].Line != 5 || res.Hits[0].Title != "Quota raised" || res.Hits[0].Kind != KindLog || res.Hits[0].Agent != "orion" || res.Hits[0].Date.Day() != 3 {
		t.Fatalf("log entry hit %+v", res.Hits)
	}
	res = mustSearch(t, ix, Query{Text: "bleve", Agent: "vega", Type: "decision"})
	if len(res.Hits) != 1 || res.Hits[0].Kind != KindDecision || res.Hits[0].Line != 3 {
		t.Fatalf("decision hit %+v", res.Hits)
	}
}

func TestHostileFiles(t *testing.T) {
	// A 10 MB note is indexed (1 MB under the race detector, which makes
	// analysis ten times slower); one over MaxFileBytes is skipped.
	size := 10 << 20
	if raceEnabled {
		size = 1 << 20
	}
	big := "# Huge\n\n" + strings.Repeat("lorem ipsum dolor sit amet consectetur. ", size/40) + "\nthe quixotic marker ends it.\n"
	tooBig := strings.Repeat("pelican ", (20<<20)/8+1)
	v := mustVault(t, map[string]string{
		"bad-yaml.md":            "---\ntitle: [unclosed\n---\nmalformed frontmatter body with pelican\n",
		"binary.md":              "\x00\x01\x02PNG\x00 pelican",
		"invalid-utf8.md":        "caf\xe9 \xff pelican tail",
		"huge.md":                big,
		"too-big.md":             tooBig,
		"empty.md":               "",
		"ok.md":                  "plain pelican note",
		".obsidian/workspace.md": "pelican secret from obsidian",
		".trash/old.md":          "pelican in the trash",
		"folder/.hidden.md":      "pelican hidden temp",
	})
	ix := mustOpen(t, v, Options{MaxFileBytes: 20 << 20})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, p := range paths(mustSearch(t, ix, Query{Text: "pelican", Limit: 50})) {
		got[p] = true
	}
	want := map[string]bool{"bad-yaml.md": true, "invalid-utf8.md": true, "ok.md": true}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pelican found in %v, want %v", got, want)
	}
	if res := mustSearch(t, ix, Query{Text: "quixotic"}); len(res.Hits) != 1 || res.Hits[0].Path != "huge.md" {
		t.Errorf("10 MB note: %v", paths(res))
	}
	fileWarns := func(ix *Index) string {
		var lines []string
		for _, fw := range ix.FileWarnings() {
			for _, w := range fw.Warnings {
				lines = append(lines, fw.Path+": "+w)
			}
		}
		return strings.Join(lines, "\n")
	}
	wantWarns := []string{"bad-yaml.md: malformed frontmatter", "binary.md: binary", "invalid-utf8.md: invalid UTF-8", "too-big.md: 20971528 bytes, larger than 20971520; not indexed"}
	warn := fileWarns(ix)
	for _, w := range wantWarns {
		if !strings.Contains(warn, w) {
			t.Errorf("warnings lack %q:\n%s", w, warn)
		}
	}
	if strings.Contains(warn, ".obsidian") || strings.Contains(warn, "ok.md") {
		t.Errorf("warnings about files that have no problem: %s", warn)
	}
	// The warnings are kept on disk: a later process sees them in Status
	// without indexing anything; fixing a file drops its warning.
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix2 := mustOpen(t, v, Options{MaxFileBytes: 20 << 20})
	st, err := ix2.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.FileWarnings) != 4 || fileWarns(ix2) != warn {
		t.Errorf("after reopening: %+v, want\n%s", st.FileWarnings, warn)
	}
	writeFile(t, v, "binary.md", "now a text pelican")
	if err := ix2.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if after := fileWarns(ix2); strings.Contains(after, "binary.md") || !strings.Contains(after, "bad-yaml.md") {
		t.Errorf("after fixing binary.md: %s", after)
	}
}

// snapshot records every file's bytes and mtime outside .nexus/.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if info.IsDir() {
			if rel == ".nexus" {
				return filepath.SkipDir
			}
			return nil
		}
		data, _ := os.ReadFile(p)
		out[rel] = fmt.Sprintf("%x %d", data, info.ModTime().UnixNano())
		return nil
	})
	return out
}

func TestNeverModifiesFiles(t *testing.T) {
	v := mustVault(t, map[string]string{
		"a.md":               "---\ntags: x\n---\n# A\r\nwindows line endings\r\n",
		"b.md":               "caf\xe9",
		".obsidian/app.json": "{}",
		"img.png":            "\x89PNG",
	})
	before := snapshot(t, v.Root())
	ix := mustOpen(t, v, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := ix.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ix.Rebuild(ctx, nil); err != nil {
		t.Fatal(err)
	}
	mustSearch(t, ix, Query{Text: "windows"})
	ix.Close()
	after := snapshot(t, v.Root())
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("files changed:\nbefore %v\nafter  %v", before, after)
	}
}

// waitFor searches until ok holds, waiting on the index's own update
// signal between tries (no sleeps).
func waitFor(t *testing.T, ix *Index, q string, ok func(*Results) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ver := ix.Version()
	for {
		res, err := ix.Search(ctx, Query{Text: q, Limit: 20})
		if err == nil && ok(res) {
			return
		}
		if ver, err = ix.Wait(ctx, ver); err != nil {
			t.Fatalf("waiting for %q: %v (last %v)", q, err, res)
		}
	}
}

func has(p string) func(*Results) bool {
	return func(r *Results) bool {
		for _, h := range r.Hits {
			if h.Path == p {
				return true
			}
		}
		return false
	}
}

func not(f func(*Results) bool) func(*Results) bool { return func(r *Results) bool { return !f(r) } }

func TestLiveUpdates(t *testing.T) {
	v := mustVault(t, map[string]string{"notes/a.md": "alpha original words"})
	ix := mustOpen(t, v, Options{Debounce: 20 * time.Millisecond, ReconcileEvery: -1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := ix.Start(ctx); err != nil {
		t.Fatal(err)
	}
	root := v.Root()
	abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }

	// Edit in place (truncate, then write, as Obsidian does).
	f, _ := os.OpenFile(abs("notes/a.md"), os.O_WRONLY|os.O_TRUNC, 0)
	f.WriteString("alpha edited mangosteen")
	f.Close()
	waitFor(t, ix, "mangosteen", has("notes/a.md"))
	waitFor(t, ix, "original", not(has("notes/a.md")))

	// Create in a new folder (nested, created at once).
	os.MkdirAll(abs("new/deep/er"), 0o755)
	os.WriteFile(abs("new/deep/er/b.md"), []byte("durian in a new folder"), 0o644)
	waitFor(t, ix, "durian", has("new/deep/er/b.md"))

	// Temp file then rename over the note.
	os.WriteFile(abs("notes/.a.md.tmp"), []byte("alpha rambutan via rename"), 0o644)
	os.Rename(abs("notes/.a.md.tmp"), abs("notes/a.md"))
	waitFor(t, ix, "rambutan", has("notes/a.md"))

	// Rename a note.
	os.Rename(abs("notes/a.md"), abs("notes/renamed.md"))
	waitFor(t, ix, "rambutan", func(r *Results) bool { return has("notes/renamed.md")(r) && !has("notes/a.md")(r) })

	// Move a folder.
	os.Rename(abs("new"), abs("moved"))
	waitFor(t, ix, "durian", func(r *Results) bool { return has("moved/deep/er/b.md")(r) && !has("new/deep/er/b.md")(r) })

	// Delete.
	os.Remove(abs("notes/renamed.md"))
	waitFor(t, ix, "rambutan", not(has("notes/renamed.md")))

	// Nexus's own write, announced with Notify.
	os.MkdirAll(abs("projects"), 0o755) // init makes only .nexus/
	os.WriteFile(abs("projects/c.md"), []byte("cherimoya notified"), 0o644)
	ix.Notify("projects/c.md")
	waitFor(t, ix, "cherimoya", has("projects/c.md"))

	st, err := ix.Status(ctx)
	if err != nil || st.Pending != 0 || !st.Watching || st.Files != 2 {
		t.Errorf("status %+v %v", st, err)
	}
}

func TestSyncAndStatus(t *testing.T) {
	v := mustVault(t, map[string]string{"a.md": "one"})
	ix := mustOpen(t, v, Options{})
	ctx := context.Background()
	st, _ := ix.Status(ctx)
	if st.Pending != 1 || st.Files != 0 {
		t.Fatalf("before sync %+v", st)
	}
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	writeFile(t, v, "b.md", "two")
	os.Remove(filepath.Join(v.Root(), "a.md"))
	st, _ = ix.Status(ctx)
	if st.Pending != 2 || st.Files != 1 || st.Documents != 1 || st.SizeBytes == 0 || st.LastUpdate.IsZero() {
		t.Fatalf("status %+v", st)
	}
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ = ix.Status(ctx); st.Pending != 0 || st.Files != 1 {
		t.Fatalf("after sync %+v", st)
	}
	// The manifest survives a reopen: nothing pending.
	ix.Close()
	ix2 := mustOpen(t, v, Options{})
	if st, _ = ix2.Status(ctx); st.Pending != 0 || st.Documents != 1 {
		t.Fatalf("after reopen %+v", st)
	}
	var last Progress
	if err := ix2.Rebuild(ctx, func(p Progress) { last = p }); err != nil {
		t.Fatal(err)
	}
	if last.Done != 1 || last.Total != 1 {
		t.Errorf("progress %+v", last)
	}
	if res := mustSearch(t, ix2, Query{Text: "two"}); len(res.Hits) != 1 {
		t.Errorf("after rebuild %v", paths(res))
	}
}

// TestHolderNotWatchingChecksTheFiles: a process that holds the index for
// a one-off job (a search still indexing the vault) does not watch the
// files; a search it answers for another process must see them all, not
// the index as far as it has got.
func TestHolderNotWatchingChecksTheFiles(t *testing.T) {
	v := mustVault(t, map[string]string{"a.md": "kumquat"})
	holder := mustOpen(t, v, Options{}) // never synced: the index is empty
	other := mustOpen(t, v, Options{})
	if !other.Remote() || holder.Remote() {
		t.Fatalf("remote: holder %v other %v", holder.Remote(), other.Remote())
	}
	if res := mustSearch(t, other, Query{Text: "kumquat"}); len(res.Hits) != 1 {
		t.Fatalf("remote search of an index not yet filled: %v", paths(res))
	}
	writeFile(t, v, "b.md", "kumquat again")
	if res := mustSearch(t, other, Query{Text: "kumquat"}); len(res.Hits) != 2 {
		t.Fatalf("remote search after an edit: %v", paths(res))
	}
}

func TestSecondOpenerAsksHolder(t *testing.T) {
	v := mustVault(t, map[string]string{"a.md": "kumquat"})
	holder := mustOpen(t, v, Options{})
	ctx := context.Background()
	if err := holder.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	other := mustOpen(t, v, Options{})
	if !other.Remote() || holder.Remote() {
		t.Fatalf("remote: holder %v other %v", holder.Remote(), other.Remote())
	}
	if res := mustSearch(t, other, Query{Text: "kumquat"}); len(res.Hits) != 1 {
		t.Fatalf("remote search %v", paths(res))
	}
	writeFile(t, v, "b.md", "kumquat again")
	if err := other.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if res := mustSearch(t, holder, Query{Text: "kumquat"}); len(res.Hits) != 2 {
		t.Fatalf("after remote sync %v", paths(res))
	}
	if _, err := other.Search(ctx, Query{Text: ""}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("remote error %v", err)
	}
	// The holder goes away: the other takes the index over, and catches
	// up with what changed meanwhile.
	holder.Close()
	writeFile(t, v, "c.md", "kumquat three")
	if res := mustSearch(t, other, Query{Text: "kumquat"}); len(res.Hits) != 3 || other.Remote() {
		t.Fatalf("after takeover %v remote=%v", paths(res), other.Remote())
	}
}

// TestSlowHolderAnswers: a holder's search that takes many times the
// client's idle bound still answers, because the holder sends keep-alives
// while it works; it is not taken for a hung one (and not taken over).
func TestSlowHolderAnswers(t *testing.T) {
	oldInterval, oldHook := keepAliveInterval, serveSearchHook
	t.Cleanup(func() { keepAliveInterval, serveSearchHook = oldInterval, oldHook })
	keepAliveInterval = 50 * time.Millisecond // the client gives up after 500 ms of silence
	slow := 40 * keepAliveInterval
	serveSearchHook = func() { time.Sleep(slow) }
	v := mustVault(t, map[string]string{"a.md": "kumquat"})
	held := mustOpen(t, v, Options{})
	if err := held.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	other := mustOpen(t, v, Options{})
	if !other.Remote() {
		t.Fatal("the second opener holds the index")
	}
	if got := other.remote.Info().KeepAliveMS; got != 50 {
		t.Fatalf("serve.json announces keep-alives every %d ms, want 50", got)
	}
	if res := mustSearch(t, other, Query{Text: "kumquat"}); len(res.Hits) != 1 || !other.Remote() {
		t.Fatalf("slow search: %v remote=%v", paths(res), other.Remote())
	}
}

// TestHelperProcess holds the index in a child process for
// TestOtherProcessHoldsIndex.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv("NEXUS_INDEX_HELPER_VAULT")
	if dir == "" {
		t.Skip("helper process only")
	}
	if d, err := time.ParseDuration(os.Getenv("NEXUS_INDEX_HELPER_KEEPALIVE")); err == nil {
		keepAliveInterval = d
	}
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Open(v, Options{Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	fmt.Println("ready")
	buf := make([]byte, 1)
	os.Stdin.Read(buf) // until the parent closes stdin
	ix.Close()
}

// holderProc is a TestHelperProcess holding a vault's index.
type holderProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   bytes.Buffer
}

// startHolder starts TestHelperProcess on v (env is added to its
// environment) and returns once it holds the index.
func startHolder(t *testing.T, v *vault.Vault, env ...string) *holderProc {
	t.Helper()
	h := &holderProc{cmd: exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")}
	h.cmd.Env = append(append(os.Environ(), "NEXUS_INDEX_HELPER_VAULT="+v.Root()), env...)
	h.stdin, _ = h.cmd.StdinPipe()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// Keep the read end open until the helper is done: if the GC closed it
	// after the last read, the helper's final "PASS" would die of SIGPIPE.
	t.Cleanup(func() { pr.Close() })
	h.cmd.Stdout = pw
	h.cmd.Stderr = &h.out
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	ready := make([]byte, 6)
	if _, err := pr.Read(ready); err != nil || string(ready) != "ready\n" {
		t.Fatalf("helper: %q %v %s", ready, err, h.out.String())
	}
	return h
}

// stop ends the helper and waits for it.
func (h *holderProc) stop() error {
	h.stdin.Close()
	if err := h.cmd.Wait(); err != nil {
		return fmt.Errorf("helper: %v %s", err, h.out.String())
	}
	return nil
}

func TestOtherProcessHoldsIndex(t *testing.T) {
	v := mustVault(t, map[string]string{"a.md": "feijoa"})
	h := startHolder(t, v)
	ix := mustOpen(t, v, Options{})
	if !ix.Remote() {
		t.Fatal("index not held by the helper")
	}
	ctx := context.Background()
	if res := mustSearch(t, ix, Query{Text: "feijoa"}); len(res.Hits) != 1 {
		t.Fatalf("search via helper %v", paths(res))
	}
	writeFile(t, v, "b.md", "feijoa two")
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if res := mustSearch(t, ix, Query{Text: "feijoa"}); len(res.Hits) != 2 {
		t.Fatalf("after sync via helper %v", paths(res))
	}
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
	if res := mustSearch(t, ix, Query{Text: "feijoa"}); len(res.Hits) != 2 || ix.Remote() {
		t.Fatalf("after the helper exited %v remote=%v", paths(res), ix.Remote())
	}
}

func FuzzQueryText(f *testing.F) {
	for _, s := range []string{"", `"a b" -c title:"x y" tag:z`, `-`, `"`, `title:`, "배포 -실패", "#🚀 x #", "##📚"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := parseQueryText(s)
		for _, w := range append(append(p.words, p.phrases...), p.excludes...) {
			if w == "" {
				t.Fatal("empty token")
			}
		}
		pl, err := buildQuery(Query{Text: s}, true)
		if (pl == nil) == (err == nil) {
			t.Fatalf("plan %v, err %v", pl, err)
		}
		if pl != nil {
			for tier := 0; tier <= len(pl.tiers); tier++ {
				if err := pl.tierQuery(tier).(query.ValidatableQuery).Validate(); err != nil {
					t.Fatalf("tier %d: %v", tier, err)
				}
			}
		}
	})
}

func makeTempDir() (string, error) { return os.MkdirTemp("", "nexus-index-bench-") }

func TestManifestRoundTrip(t *testing.T) {
	m := manifest{Schema: schemaVersion, LastUpdate: time.Date(2026, 11, 29, 16, 0, 0, 5, time.UTC), files: map[string]fileState{
		"a.md":                        {Size: 1, Mtime: 2, Ctime: 3, Sum: 0xfeed0001, Summed: true},
		"zero-sum.md":                 {Size: 1, Mtime: 2, Ctime: 3, Summed: true},
		"노트/배포.md":                    {Size: 300, Mtime: -5, Ctime: 1733000000000000009, Disk: "노트/배포.md"},
		"tab\tand\nnewline.md":        {Size: 0, Mtime: 0},
		`"quoted".md`:                 {Size: 9, Mtime: 9},
		"log/live/2026-12/lyra@vm.md": {Size: 900, Mtime: 7, LogOff: 650, LogLine: 12, LogCRC: 0xdeadbeef},
		"log/live/2026-12/로그@맥.md":    {Size: 0, Mtime: 7, Disk: "log/live/2026-12/로그@맥.md", LogOff: 0, LogLine: 1},
	}}
	got, err := decodeManifest(encodeManifest(m))
	if err != nil || got.Schema != m.Schema || !got.LastUpdate.Equal(m.LastUpdate) || fmt.Sprint(got.files) != fmt.Sprint(m.files) {
		t.Fatalf("round trip:\n%v %v\n%v", got, err, m)
	}
	for _, bad := range []string{"", "json", manifestMagic + " schema=x", "nexus-index-manifest 4 schema=1\n",
		manifestMagic + "\n1\t2\n", manifestMagic + "\n1\t2\t\"a\"\t\n", // no change time
		manifestMagic + "\nx\t2\t3\t-\t\"a\"\t\n", manifestMagic + "\n1\t2\tx\t-\t\"a\"\t\n", manifestMagic + "\n1\t2\t3\t-\t\"\"\t\n",
		manifestMagic + "\n1\t2\t3\t-\t\"a\"\t\t1:0:00000000\n", manifestMagic + "\n1\t2\t3\t-\t\"a\"\t\t-1:1:00000000\n", manifestMagic + "\n1\t2\t3\t-\t\"a\"\t\t1:1:0\n", manifestMagic + "\n1\t2\t3\t-\t\"a\"\t\t1:1:00000000\tx\n",
		manifestMagic + "\n1\t2\t3\t\"a\"\t\n", manifestMagic + "\n1\t2\t3\tabc\t\"a\"\t\n", manifestMagic + "\n1\t2\t3\t+0000001\t\"a\"\t\n", // a bad SUM
		manifestMagicV2 + "\nx\t2\t\"a\"\t\n", manifestMagicV2 + "\n1\t2\t\"a\"\t\t1:0:00000000\n"} {
		if _, err := decodeManifest([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func FuzzManifest(f *testing.F) {
	f.Add(string(encodeManifest(manifest{Schema: 6, files: map[string]fileState{"a.md": {Size: 1, Mtime: 2}, "b/c.md": {Size: 3, Mtime: 4, Disk: "b/c.md"}, "log/decisions/a@b.md": {Size: 5, Mtime: 6, LogOff: 3, LogLine: 2, LogCRC: 1}}})))
	f.Add(manifestMagic + " schema=1\n1\t2\t3\t-\t\"x\"\t\"y\"\n1\t2\t3\t0000abcd\t\"z\"\t\n\n")
	f.Add(manifestMagicV2 + " schema=1\n1\t2\t\"x\"\t\"y\"\n\n")
	f.Add(`"a\tb.md"`)
	f.Add("-12")
	f.Add("1732900000123456789")
	f.Add("-9223372036854775808")
	f.Add("9223372036854775808")
	f.Fuzz(func(t *testing.T, s string) {
		// The fast field parsers agree with strconv.
		if got, err := unquote([]byte(s)); err == nil {
			if want, werr := strconv.Unquote(s); werr != nil || got != want {
				t.Fatalf("unquote(%q) = %q, strconv: %q %v", s, got, want, werr)
			}
		}
		if got, err := parseInt([]byte(s)); err == nil {
			if want, werr := strconv.ParseInt(s, 10, 64); werr != nil || got != want {
				t.Fatalf("parseInt(%q) = %d, strconv: %d %v", s, got, want, werr)
			}
		}
		m, err := decodeManifest([]byte(s))
		if err != nil {
			return
		}
		again, err := decodeManifest(encodeManifest(m))
		if err != nil || len(again.files) != len(m.files) || again.Schema != m.Schema || again.sum != m.sum || again.n != m.n {
			t.Fatalf("re-encode: %v %v vs %v", err, again, m)
		}
	})
}

func TestNFDFileName(t *testing.T) {
	// macOS may store Korean names decomposed (NFD); paths are compared
	// NFC, as Obsidian does, and reported as on disk, so the hit opens
	// (SPEC §5).
	nfd := norm.NFD.String("노트/배포.md")
	v := mustVault(t, map[string]string{nfd: "# 배포\n\n배포를 끝냈다 tangelo\n"})
	ix := mustOpen(t, v, Options{})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := mustSearch(t, ix, Query{Text: "tangelo"})
	if len(res.Hits) != 1 || res.Hits[0].Path != nfd || !strings.Contains(res.Hits[0].Snippet, "**tangelo**") {
		t.Fatalf("hits %+v", res.Hits)
	}
	if _, err := os.Stat(filepath.Join(v.Root(), filepath.FromSlash(res.Hits[0].Path))); err != nil {
		t.Fatalf("the hit's path does not open: %v", err)
	}
	if res := mustSearch(t, ix, Query{Text: "tangelo", PathPrefix: "노트/"}); len(res.Hits) != 1 {
		t.Fatalf("NFC path prefix: %v", paths(res))
	}
	if res := mustSearch(t, ix, Query{Text: "tangelo", PathPrefix: norm.NFD.String("노트/")}); len(res.Hits) != 1 {
		t.Fatalf("NFD path prefix: %v", paths(res))
	}
}

// TestSnippetHidesComments: signature lines of log entries and %%comments%%
// never show in snippets.
func TestSnippetHidesComments(t *testing.T) {
	v := mustVault(t, map[string]string{
		"log/live/2026-11.md": "### 2026-11-29T02:00:00Z lyra [deploy/shipped] Fixed the quokka timeout\nlonger quokka text\n<!-- nexus prev=AAAA sig=BBBB -->\n",
		"notes/a.md":          "# A\n\nwallaby here %%private wallaby remark%% and more wallaby.\n",
	})
	ix := mustOpen(t, v, Options{})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	for q, leak := range map[string]string{"quokka": "sig=", "wallaby": "private"} {
		res := mustSearch(t, ix, Query{Text: q})
		if len(res.Hits) == 0 {
			t.Fatalf("%s: no hit", q)
		}
		if sn := res.Hits[0].Snippet; strings.Contains(sn, leak) || !strings.Contains(sn, "**"+q+"**") {
			t.Errorf("%s: snippet %q", q, sn)
		}
	}
}

// TestRankingTiers checks the order of hits for plain words: the words as
// the title, then side by side in the text, then a word in the title, in
// a heading or tag, and elsewhere; each hit says which.
func TestRankingTiers(t *testing.T) {
	v := mustVault(t, map[string]string{
		"body.md":     "# Misc\n\nThe release went out and the rollback plan was ready.\n",
		"heading.md":  "# Notes\n\n## Rollback\n\nThe release is done.\n",
		"title.md":    "# Rollback\n\nAfter the release nobody asked.\n",
		"together.md": "# Friday\n\nWe practised the release rollback twice.\n",
		"phrase.md":   "# Release rollback\n\nSteps live elsewhere.\n",
		"tagged.md":   "---\ntags: [rollback]\n---\nSome release text, and more release text.\n",
		"other.md":    "# Unrelated\n\nNothing here.\n",
	})
	ix := mustOpen(t, v, Options{})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := mustSearch(t, ix, Query{Text: "release rollback", NoSnippets: true})
	var got []string
	for _, h := range res.Hits {
		got = append(got, h.Path+"="+h.Match)
	}
	want := []string{"phrase.md=" + MatchTitlePhrase, "together.md=" + MatchTogether, "title.md=" + MatchTitle}
	if len(got) != 6 || strings.Join(got[:3], " ") != strings.Join(want, " ") {
		t.Fatalf("order %v, want %v first", got, want)
	}
	// heading.md and tagged.md share the heading tier (in either order),
	// body.md comes last.
	if tail := strings.Join(got[3:5], " "); !strings.Contains(tail, "heading.md="+MatchHeading) || !strings.Contains(tail, "tagged.md="+MatchHeading) || got[5] != "body.md="+MatchWords {
		t.Fatalf("order %v", got)
	}
	if res.Total != 6 || res.TotalCapped {
		t.Fatalf("total %d capped %v", res.Total, res.TotalCapped)
	}
	// A limit that ends inside a tier keeps the order.
	res = mustSearch(t, ix, Query{Text: "release rollback", Limit: 2, NoSnippets: true})
	if paths(res)[0] != "phrase.md" || paths(res)[1] != "together.md" || res.Total != 6 {
		t.Fatalf("limit 2: %v total %d", paths(res), res.Total)
	}
	// MinScore drops the weak hits of each kind, not whole kinds: a
	// threshold at the words-tier hit's score keeps that hit.
	res = mustSearch(t, ix, Query{Text: "release rollback", NoSnippets: true})
	last := res.Hits[len(res.Hits)-1]
	if last.Match != MatchWords {
		t.Fatalf("last hit %+v", last)
	}

	// With a limit of 3 the page is filled past the weak hits (which of
	// the together, title and heading hits are weak depends on their
	// scores), down to body.md.
	res = mustSearch(t, ix, Query{Text: "release rollback", NoSnippets: true, MinScore: last.Score, Limit: 3})
	if len(res.Hits) < 2 || res.Hits[0].Path != "phrase.md" || res.Hits[len(res.Hits)-1].Path != last.Path {
		t.Fatalf("min score %v: %v", last.Score, paths(res))
	}
	for _, h := range res.Hits {
		if h.Score < last.Score {
			t.Fatalf("min score %v kept %s at %v", last.Score, h.Path, h.Score)
		}
	}
	// One word: no phrase or together tier; the note it names first.
	res = mustSearch(t, ix, Query{Text: "rollback", NoSnippets: true})
	if res.Hits[0].Path != "title.md" || res.Hits[0].Match != MatchTitlePhrase || res.Hits[1].Match != MatchTitle || res.Hits[len(res.Hits)-1].Match != MatchWords {
		t.Fatalf("one word: %+v", res.Hits)
	}
}

// TestCountCapped checks that counting stops at countLimit without
// cutting the hits a larger limit asks for.
func TestCountCapped(t *testing.T) {
	files := map[string]string{}
	for i := range 8 {
		files[fmt.Sprintf("n%d.md", i)] = "# Note\n\nbackup text\n"
	}
	files["t.md"] = "# Backup\n\nbackup text\n"
	ix := mustOpen(t, mustVault(t, files), Options{})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	old := countLimit
	countLimit = 3
	defer func() { countLimit = old }()
	for _, tt := range []struct {
		limit, hits int
		total       uint64
		capped      bool
	}{
		{2, 2, 3, true},
		{5, 5, 5, true},   // counted up to the limit, at least
		{50, 9, 9, false}, // all counted
	} {
		res := mustSearch(t, ix, Query{Text: "backup", Limit: tt.limit, NoSnippets: true})
		if len(res.Hits) != tt.hits || res.Total != tt.total || res.TotalCapped != tt.capped || res.Hits[0].Path != "t.md" {
			t.Errorf("limit %d: %d hits (first %s), total %d capped %v", tt.limit, len(res.Hits), res.Hits[0].Path, res.Total, res.TotalCapped)
		}
	}
	countLimit = 100
	if res := mustSearch(t, ix, Query{Text: "backup", NoSnippets: true}); res.Total != 9 || res.TotalCapped {
		t.Errorf("uncapped total %d capped %v", res.Total, res.TotalCapped)
	}
}

func TestCrossPairs(t *testing.T) {
	for _, tt := range []struct {
		words []string
		want  string
	}{
		{[]string{"staging"}, ""},
		{[]string{"모니터"}, ""}, // bigrams of one word pair up: not "together"
		{[]string{"staging", "ssh", "port"}, "stage ssh|ssh port"},
		{[]string{"deploy", "the", "server"}, "deploy server"}, // stop words left out
		// The bigram across the space (터배) stands between the words:
		// "모니터 배포" and "모니터배포" both hold these pairs;
		// "모니터, 배포" holds the last: punctuation stops the bigram.
		{[]string{"모니터", "배포"}, "니터 터배|터배 배포|니터 배포"},
		// No pair across a Korean question word (koreanStems' "").
		{[]string{"모니터", "", "배포"}, ""},
		{[]string{"ssh", "ssh"}, "ssh ssh"},
	} {
		if got := strings.Join(crossPairs(tt.words), "|"); got != tt.want {
			t.Errorf("crossPairs(%q) = %q, want %q", tt.words, got, tt.want)
		}
	}
}

// TestHolderYields: a holder opened with Yield steps down when asked, one
// without does not, and checking that a holder is there (every Open does)
// does not count as using it.
func TestHolderYields(t *testing.T) {
	ctx := context.Background()
	for _, yield := range []bool{false, true} {
		v := mustVault(t, map[string]string{"a.md": "lychee"})
		holder := mustOpen(t, v, Options{Yield: yield})
		if err := holder.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		asked := holder.LastAsked()
		other := mustOpen(t, v, Options{})
		if !other.Remote() || !holder.LastAsked().Equal(asked) {
			t.Fatalf("yield=%v: remote %v, last asked moved by a ping: %v -> %v", yield, other.Remote(), asked, holder.LastAsked())
		}
		mustSearch(t, other, Query{Text: "lychee"})
		if !holder.LastAsked().After(asked) {
			t.Fatalf("yield=%v: a search did not count as asking", yield)
		}
		ok, err := other.AskHolderToYield(ctx)
		if err != nil || ok != yield {
			t.Fatalf("yield=%v: asked to yield: %v %v", yield, ok, err)
		}
		select {
		case <-holder.Yielded():
			if !yield {
				t.Fatal("a holder without Yield yielded")
			}
			holder.Close()
			// The other process takes over on its next call.
			if res := mustSearch(t, other, Query{Text: "lychee"}); len(res.Hits) != 1 || other.Remote() {
				t.Fatalf("after yielding: %v remote=%v", paths(res), other.Remote())
			}
		case <-time.After(200 * time.Millisecond):
			if yield {
				t.Fatal("the holder was not told to yield")
			}
		}
	}
}

// TestWatcherQueueKeepsPathsDueDuringAnUpdate: asking when the next path is
// due takes nothing from the queue (a path that fell due while an update
// ran used to be taken by that question and dropped: a moved folder then
// kept its old paths in the index).
func TestWatcherQueueKeepsPathsDueDuringAnUpdate(t *testing.T) {
	w := &watcher{pending: map[string]time.Time{}}
	now := time.Now()
	w.pending["later"] = now.Add(time.Hour)
	w.pending["now"] = now
	if ready := w.due(now); len(ready) != 1 || ready[0] != "now" {
		t.Fatalf("due: %v", ready)
	}
	w.pending["fell-due"] = now.Add(-time.Millisecond)
	if next := w.next(now); next != 0 {
		t.Fatalf("next = %v, want 0 (a path is due)", next)
	}
	if _, ok := w.pending["fell-due"]; !ok {
		t.Fatal("next took a due path from the queue")
	}
	if ready := w.due(now); len(ready) != 1 || ready[0] != "fell-due" {
		t.Fatalf("due after next: %v", ready)
	}
	if next := w.next(now); next <= 0 || next > time.Hour {
		t.Fatalf("next = %v, want about an hour", next)
	}
	delete(w.pending, "later")
	if next := w.next(now); next != -1 {
		t.Fatalf("next on an empty queue = %v", next)
	}
}

// TestHolderVersion: a holder announces the index schema it serves, so
// that a Nexus with another schema does not ask a holder of the old one.
// The 2 is the wire's own version (2: keep-alive lines).
func TestHolderVersion(t *testing.T) {
	if want := schemaVersion*100 + 2; holder.Version != want {
		t.Fatalf("holder.Version = %d; the index schema is %d: set it to %d", holder.Version, schemaVersion, want)
	}
}

// TestInvalidUTF8Query: a stray byte in a query splits two words as it
// does in a note (both become U+FFFD), and loses none of the words after
// it.
func TestInvalidUTF8Query(t *testing.T) {
	v := mustVault(t, map[string]string{
		"a.md": "# A\n\nalpha beta gamma\n",
		"b.md": "# B\n\nalpha only here\n",
		"c.md": "# C\n\n시간 초과 오류\n",
		"d.md": "# D\n\ndelta\xffepsilon\n",
	})
	ix := mustOpen(t, v, Options{NoServe: true})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		q    Query
		want []string
	}{
		{Query{Text: "alpha \xff beta"}, []string{"a.md"}},
		{Query{Text: "alpha\xffbeta"}, []string{"a.md"}},
		{Query{Text: "\"alpha \xff beta\""}, []string{"a.md"}},
		{Query{Text: "alpha -\xffbeta"}, []string{"b.md"}},
		{Query{Text: "시간\xff초과"}, []string{"c.md"}},
		{Query{Text: "delta\xffepsilon"}, []string{"d.md"}},
		{Query{Text: "epsilon"}, []string{"d.md"}},
		{Query{Text: "alpha", Tag: "\xff"}, nil},
	}
	for _, tt := range tests {
		got := paths(mustSearch(t, ix, tt.q))
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%+q: got %q, want %q", tt.q.Text, got, tt.want)
		}
	}
}

// TestInvisibleNotShown: a hit's title and heading are shown without the
// invisible code points of the note (a tag character can carry an
// instruction to the agent reading the hit), and found by their visible
// words.
func TestInvisibleNotShown(t *testing.T) {
	long := strings.Repeat("plain filler sentence for the section. ", 80)
	v := mustVault(t, map[string]string{
		"plan.md": "---\ntitle: Se\u200bcret\U000E0041 Plan\n---\n# Intro\n\n" + long + "\n\n## Step\u2060 one of the quetzal\n\n" + long + "\n",
	})
	ix := mustOpen(t, v, Options{NoServe: true})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := mustSearch(t, ix, Query{Text: "secret quetzal"})
	if len(res.Hits) == 0 {
		t.Fatal("no hit")
	}
	h := res.Hits[0]
	if h.Title != "Secret Plan" || h.Heading != "Step one of the quetzal" {
		t.Errorf("title %+q, heading %+q: want them without invisible code points", h.Title, h.Heading)
	}
	// A note with no text shows its title as the snippet.
	writeFile(t, v, "notes/Ze\u200bbra\U000E0041\U000E0042.md", "<!-- nothing here -->\n")
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	res = mustSearch(t, ix, Query{Text: "zebra"})
	if len(res.Hits) != 1 || res.Hits[0].Title != "Zebra" || res.Hits[0].Snippet != "**Zebra**" {
		t.Errorf("hits %+v: want the title and snippet Zebra, without invisible code points", res.Hits)
	}
}
