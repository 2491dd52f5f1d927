package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// feedEntry is one entry in livelog's grammar (the signature is not
// checked by the index).
func feedEntry(i int, agent, summary, body string) string {
	return fmt.Sprintf("### 2026-12-01T10:%02d:%02dZ %s [general/note] %s\n%s\n<!-- nexus w=%s@vm seq=%d prev=AAAA sig=BBBB -->\n\n", i/60%60, i%60, agent, summary, body, agent, i+1)
}

func appendTo(t testing.TB, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// docSet is every document of the index: its id and stored fields.
func docSet(t *testing.T, ix *Index) []string {
	t.Helper()
	bi, _ := ix.local()
	req := bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), 100000, 0, false)
	req.Fields = []string{"*"}
	res, err := bi.Search(req)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range res.Hits {
		keys := make([]string, 0, len(h.Fields))
		for k := range h.Fields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		line := h.ID
		for _, k := range keys {
			line += fmt.Sprintf(" %s=%v", k, h.Fields[k])
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}

func TestLogIndexedIncrementally(t *testing.T) {
	const feed = "log/live/2026-12/lyra@vm.md"
	var b strings.Builder
	for i := range 2000 {
		b.WriteString(feedEntry(i, "lyra", fmt.Sprintf("routine entry %d", i), "nothing to see, filler text for size"))
	}
	v := mustVault(t, map[string]string{
		feed:                       b.String(),
		"log/decisions/vega@vm.md": "### 2026-12-01T09:00:00Z vega [decision/D-0001] Use bleve\nWe pick bleve for search.\n<!-- nexus w=vega@vm seq=1 prev=AAAA sig=BBBB -->\n\n",
		"notes/a.md":               "# A\n\nplain note\n",
	})
	abs := filepath.Join(v.Root(), filepath.FromSlash(feed))
	ix := mustOpen(t, v, Options{})
	ctx := context.Background()
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := paths(mustSearch(t, ix, Query{Text: "bleve", Type: "decision"})); len(got) != 1 || got[0] != "log/decisions/vega@vm.md" {
		t.Fatalf("decision feed: %v", got)
	}

	// An append: only the last indexed entry and the new one are read.
	before := ix.logParsed.Load()
	entry := feedEntry(2000, "lyra", "quokka outage fixed", "root cause: the quokka cache")
	appendTo(t, abs, entry)
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	read := ix.logParsed.Load() - before
	if read > int64(3*len(entry)) {
		t.Errorf("an append of %d bytes read %d bytes of a %d-byte feed", len(entry), read, b.Len()+len(entry))
	}
	res := mustSearch(t, ix, Query{Text: "quokka"})
	if len(res.Hits) != 1 || res.Hits[0].Line != 2000*4+1 || res.Hits[0].Agent != "lyra" || res.Hits[0].Kind != KindLog || res.Hits[0].Title != "quokka outage fixed" {
		t.Fatalf("new entry: %+v", res.Hits)
	}
	if got := paths(mustSearch(t, ix, Query{Text: "routine entry 1999"})); len(got) == 0 {
		t.Fatal("the entry before the append was lost")
	}

	// A torn record completed by the next append: the last block is read
	// again.
	appendTo(t, abs, "### 2026-12-01T11:00:00Z lyra [general/note] half written wombat")
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	appendTo(t, abs, " and the rest\nbody of the wombat\n<!-- nexus w=lyra@vm seq=2002 prev=AAAA sig=BBBB -->\n\n")
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if res := mustSearch(t, ix, Query{Text: "wombat rest"}); len(res.Hits) != 1 || res.Hits[0].Title != "half written wombat and the rest" {
		t.Fatalf("completed entry: %+v", res.Hits)
	}

	// Same as indexing the grown file from scratch.
	want := rebuiltDocs(t, v)
	if got := docSet(t, ix); !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("incremental index differs from a rebuild:\n%s\n%s", got[i], want[i])
			}
		}
		t.Fatalf("incremental index differs from a rebuild: %d docs vs %d", len(got), len(want))
	}

	// A change before the offset (same size): the file is indexed whole,
	// and the old text is gone.
	data, err := os.ReadFile(abs)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), "routine entry 7\n", "changed entry 7\n", 1))
	data = append(data, feedEntry(2003, "lyra", "tail after edit", "x")...)
	if err := os.WriteFile(abs, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before = ix.logParsed.Load()
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if read := ix.logParsed.Load() - before; read != int64(len(data)) {
		t.Errorf("edited feed: read %d bytes, want the whole %d", read, len(data))
	}
	if got := paths(mustSearch(t, ix, Query{Text: `"changed entry 7"`})); len(got) != 1 {
		t.Errorf("edit before the offset not indexed: %v", got)
	}
	if got := paths(mustSearch(t, ix, Query{Text: `"routine entry 7"`})); len(got) != 0 {
		t.Errorf("old text still found: %v", got)
	}

	// The file shrank: indexed whole, the cut entries are gone.
	if err := os.WriteFile(abs, []byte(feedEntry(0, "lyra", "only entry left", "y")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := paths(mustSearch(t, ix, Query{Text: "quokka"})); len(got) != 0 {
		t.Errorf("cut entry still found: %v", got)
	}
	if got := docSet(t, ix); !slices.Equal(got, rebuiltDocs(t, v)) {
		t.Errorf("after shrinking: %v", got)
	}

	// The marks survive a reopen (they are in the manifest).
	ix.Close()
	ix2 := mustOpen(t, v, Options{})
	if err := ix2.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	appendTo(t, abs, feedEntry(1, "lyra", "after reopen", "z"))
	before = ix2.logParsed.Load()
	if err := ix2.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if read := ix2.logParsed.Load() - before; read > 600 {
		t.Errorf("append after reopen read %d bytes", read)
	}
	if got := paths(mustSearch(t, ix2, Query{Text: "reopen"})); len(got) != 1 {
		t.Errorf("after reopen: %v", got)
	}
}

// rebuiltDocs is docSet of a fresh index of a copy of v's files.
func rebuiltDocs(t *testing.T, v interface{ Root() string }) []string {
	t.Helper()
	files := map[string]string{}
	mtimes := map[string]time.Time{}
	err := filepath.WalkDir(v.Root(), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(v.Root(), p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && rel != "." {
			return filepath.SkipDir
		}
		if !d.IsDir() && isNote(rel) {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files[rel] = string(data)
			info, err := d.Info()
			if err != nil {
				return err
			}
			mtimes[rel] = info.ModTime()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cp := mustVault(t, files)
	for rel, mt := range mtimes {
		if err := os.Chtimes(filepath.Join(cp.Root(), filepath.FromSlash(rel)), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	ix := mustOpen(t, cp, Options{})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	return docSet(t, ix)
}

// BenchmarkLogAppend is one entry (a 3 KiB body) appended to a feed that
// already holds size bytes, then synced: the index work of one append,
// which must not grow with the feed.
func BenchmarkLogAppend(b *testing.B) {
	for _, size := range []int{1 << 20, 16 << 20} {
		b.Run(fmt.Sprintf("feed-%dMiB", size>>20), func(b *testing.B) {
			const feed = "log/live/2026-12/lyra@vm.md"
			body := strings.Repeat("deploy rollback latency 배포 장애 cache quota shard.\n", 60)
			var sb strings.Builder
			for i := 0; sb.Len() < size; i++ {
				sb.WriteString(feedEntry(i, "lyra", fmt.Sprintf("entry %d", i), body))
			}
			v := mustVault(b, map[string]string{feed: sb.String()})
			abs := filepath.Join(v.Root(), filepath.FromSlash(feed))
			ix := mustOpen(b, v, Options{NoServe: true})
			ctx := context.Background()
			if err := ix.Sync(ctx); err != nil {
				b.Fatal(err)
			}
			f, err := os.OpenFile(abs, os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.ResetTimer()
			for i := range b.N {
				if _, err := f.WriteString(feedEntry(i, "lyra", fmt.Sprintf("appended %d", i), body)); err != nil {
					b.Fatal(err)
				}
				ix.Notify(feed)
			}
		})
	}
}
