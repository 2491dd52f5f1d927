package index

import (
	"context"
	"sync"
	"testing"

	"github.com/nexus-memory/nexus/index/indextest"
	"github.com/nexus-memory/nexus/vault"
)

// For the 100,000-note numbers run cmd/nexus-bench; these benchmarks use a
// small vault so that they run in seconds.

var benchOnce struct {
	sync.Once
	ix  *Index
	gv  *indextest.Vault
	err error
}

func benchIndex(b *testing.B) (*Index, *indextest.Vault) {
	benchOnce.Do(func() {
		dir, err := makeTempDir()
		if err != nil {
			benchOnce.err = err
			return
		}
		v, _, err := vault.Init(dir)
		if err != nil {
			benchOnce.err = err
			return
		}
		gv, err := indextest.Generate(dir, indextest.Options{Notes: 2000, Seed: 3, Needles: true})
		if err != nil {
			benchOnce.err = err
			return
		}
		ix, err := Open(v, Options{NoServe: true})
		if err == nil {
			err = ix.Sync(context.Background())
		}
		benchOnce.ix, benchOnce.gv, benchOnce.err = ix, gv, err
	})
	if benchOnce.err != nil {
		b.Fatal(benchOnce.err)
	}
	return benchOnce.ix, benchOnce.gv
}

func BenchmarkSearch(b *testing.B) {
	ix, gv := benchIndex(b)
	queries := []string{"staging ssh port", "deploy", "배포", "backup restore error"}
	for _, n := range gv.Needles {
		queries = append(queries, n.Query)
	}
	for _, snip := range []bool{true, false} {
		name := "snippets"
		if !snip {
			name = "no-snippets"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			i := 0
			for b.Loop() {
				if _, err := ix.Search(ctx, Query{Text: queries[i%len(queries)], NoSnippets: !snip}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

func BenchmarkSyncNoChanges(b *testing.B) {
	ix, _ := benchIndex(b)
	ctx := context.Background()
	for b.Loop() {
		if err := ix.Sync(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRebuild rebuilds the 2,000-note index (for profiles:
// go test -run X -bench Rebuild -cpuprofile cpu.out ./index).
func BenchmarkRebuild(b *testing.B) {
	ix, _ := benchIndex(b)
	ctx := context.Background()
	for b.Loop() {
		if err := ix.Rebuild(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}
