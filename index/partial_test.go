package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/nexus-memory/nexus/vault"
)

// indexedPaths are the paths of every document in the index.
func indexedPaths(t *testing.T, ix *Index) []string {
	t.Helper()
	bi, _ := ix.local()
	req := bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), 100000, 0, false)
	req.Fields = []string{"path"}
	res, err := bi.Search(req)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range res.Hits {
		p, _ := h.Fields["path"].(string)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// manifestPaths are the files the manifest says are indexed.
func manifestPaths(ix *Index) []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var out []string
	for k := range ix.files() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkAgree fails unless the manifest claims exactly the files the
// index holds documents of.
func checkAgree(t *testing.T, ix *Index) {
	t.Helper()
	docs, man := indexedPaths(t, ix), manifestPaths(ix)
	if !slices.Equal(docs, man) {
		t.Fatalf("the manifest and the index disagree: %d files in the index, %d in the manifest; in the index only %v; in the manifest only %v",
			len(docs), len(man), minus(docs, man), minus(man, docs))
	}
}

func minus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// noteVault makes a vault of n notes notes/nNNN.md, each holding the
// word wNNN and "common", nNNN older than nNNN+1.
func noteVault(t *testing.T, n int, version string) *vault.Vault {
	t.Helper()
	v := mustVault(t, nil)
	writeNotes(t, v, n, version)
	return v
}

func writeNotes(t *testing.T, v *vault.Vault, n int, version string) {
	t.Helper()
	base := time.Now().Add(-time.Hour)
	for i := range n {
		rel := fmt.Sprintf("notes/n%03d.md", i)
		writeFile(t, v, rel, fmt.Sprintf("# Note %d\n\ncommon w%03d %sx%03d\n", i, i, version, i))
		mt := base.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(filepath.Join(v.Root(), filepath.FromSlash(rel)), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
}

func setApplyStep(t *testing.T, f func(done int)) {
	applyStep = f
	t.Cleanup(func() { applyStep = nil })
}

// TestSyncForStopsAndResumes: a sync stopped part way commits what it
// read, newest notes first, with the manifest agreeing; searches say
// the index is catching up until a later sync completes it, which goes
// on from there (also in another process, from the manifest on disk).
func TestSyncForStopsAndResumes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2)) // bounds the files read ahead of the stop
	const n = 300
	v := noteVault(t, n, "v")
	ix := mustOpen(t, v, Options{NoServe: true, MemoryBudget: 50 * batchDocBytes})
	stop := make(chan struct{})
	setApplyStep(t, func(done int) {
		if done == 120 {
			close(stop)
		}
	})
	var last Progress
	complete, err := ix.syncUntil(context.Background(), func(p Progress) { last = p }, stop)
	if err != nil || complete {
		t.Fatalf("stopped sync: complete %v, err %v", complete, err)
	}
	applyStep = nil
	got := indexedPaths(t, ix)
	if len(got) < 120 || len(got) >= n {
		t.Fatalf("stopped after 120 files, %d are indexed", len(got))
	}
	if last.Total != n || last.Done >= n {
		t.Errorf("last progress %+v, want Total %d and Done short of it", last, n)
	}
	checkAgree(t, ix)
	// Newest first: the indexed notes are the newest.
	for i := n - len(got); i < n; i++ {
		if p := fmt.Sprintf("notes/n%03d.md", i); !slices.Contains(got, p) {
			t.Fatalf("%s (among the %d newest) is not indexed; indexed: %v", p, len(got), got)
		}
	}
	res := mustSearch(t, ix, Query{Text: "w299"})
	if len(res.Hits) != 1 || !res.CatchingUp {
		t.Fatalf("search after a stopped sync: %d hits, CatchingUp %v; want 1 and true", len(res.Hits), res.CatchingUp)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	// Another process goes on from the manifest on disk.
	ix2 := mustOpen(t, v, Options{NoServe: true, MemoryBudget: 50 * batchDocBytes})
	if got2 := manifestPaths(ix2); !slices.Equal(got2, got) {
		t.Fatalf("reopened, the manifest holds %d files, want the %d indexed", len(got2), len(got))
	}
	var redone int
	setApplyStep(t, func(done int) { redone = done })
	complete, err = ix2.SyncFor(context.Background(), time.Hour, nil)
	if err != nil || !complete {
		t.Fatalf("full sync: complete %v, err %v", complete, err)
	}
	if redone != n-len(got) {
		t.Errorf("the second sync indexed %d files, want the %d left", redone, n-len(got))
	}
	checkAgree(t, ix2)
	if got := indexedPaths(t, ix2); len(got) != n {
		t.Fatalf("%d files indexed, want %d", len(got), n)
	}
	res = mustSearch(t, ix2, Query{Text: "w000"})
	if len(res.Hits) != 1 || res.CatchingUp {
		t.Fatalf("search after a full sync: %d hits, CatchingUp %v; want 1 and false", len(res.Hits), res.CatchingUp)
	}
}

// TestCancelledSyncLeavesIndexConsistent: a sync cancelled at any point
// (before its first batch, between batches) leaves the manifest claiming
// exactly what the index holds, so the next sync drops a deleted note and
// indexes every edit. The manifest once forgot a deleted file before its
// deletion was committed, leaving the note findable for good.
func TestCancelledSyncLeavesIndexConsistent(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	const n = 200
	for _, at := range []int{1, 10, 120, n} {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			v := noteVault(t, n, "old")
			ix := mustOpen(t, v, Options{NoServe: true, MemoryBudget: 50 * batchDocBytes})
			if err := ix.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(v.Root(), "notes", "n000.md")); err != nil {
				t.Fatal(err)
			}
			writeNotes(t, v, n, "newer") // every note edited (longer)
			if err := os.Remove(filepath.Join(v.Root(), "notes", "n000.md")); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			setApplyStep(t, func(done int) {
				if done == at {
					cancel()
				}
			})
			if err := ix.Sync(ctx); err == nil {
				t.Fatal("a cancelled sync reported no error")
			}
			applyStep = nil
			checkAgree(t, ix)
			if err := ix.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			checkAgree(t, ix)
			if res := mustSearch(t, ix, Query{Text: "w000"}); len(res.Hits) != 0 {
				t.Errorf("the deleted note is still found: %v", paths(res))
			}
			if res := mustSearch(t, ix, Query{Text: "oldx150"}); len(res.Hits) != 0 {
				t.Errorf("an edited note's old text is still found: %v", paths(res))
			}
			if res := mustSearch(t, ix, Query{Text: "newerx150"}); len(res.Hits) != 1 {
				t.Errorf("an edited note's new text: %v, want one hit", paths(res))
			}
		})
	}
}

// TestSyncForInMemoryIndexesEverything: the index a read-only vault
// builds in memory is the process's whole answer, so a stopped sync
// indexes every file all the same.
func TestSyncForInMemoryIndexesEverything(t *testing.T) {
	const n = 120
	v := noteVault(t, n, "v")
	ix := mustOpen(t, v, Options{NoServe: true, MemoryBudget: 50 * batchDocBytes})
	ix.mu.Lock()
	ix.bmu.Lock()
	ix.bi.Close()
	ix.bi = nil
	ix.bmu.Unlock()
	os.Remove(filepath.Join(ix.dir, manifestFile)) // no index of this schema on disk: one in memory
	err := ix.openReadOnly()
	ix.mu.Unlock()
	if err != nil || !ix.InMemory() {
		t.Fatalf("open read-only: %v, in memory %v", err, ix.InMemory())
	}
	stop := make(chan struct{})
	close(stop)
	complete, err := ix.syncUntil(context.Background(), nil, stop)
	if err != nil || !complete {
		t.Fatalf("stopped sync in memory: complete %v, err %v; want every file indexed", complete, err)
	}
	if got := indexedPaths(t, ix); len(got) != n {
		t.Fatalf("%d files indexed in memory, want %d", len(got), n)
	}
	if res := mustSearch(t, ix, Query{Text: "w000"}); len(res.Hits) != 1 || res.CatchingUp {
		t.Fatalf("search: %d hits, CatchingUp %v; want 1 and false", len(res.Hits), res.CatchingUp)
	}
}
