package index

import (
	"context"
	"os"
	"testing"

	"github.com/nexus-memory/nexus/vault"
)

// BenchmarkColdSearch is what a 'nexus search' process with nobody
// holding the index does after start-up: open the index, check every file
// against the manifest, search, close. NEXUS_BENCH_VAULT names an indexed
// vault (e.g. one cmd/nexus-bench generated); skipped without it.
//
//	NEXUS_BENCH_VAULT=/tmp/nexus-bench-10000 go test ./index -run '^$' -bench ColdSearch -benchtime 20x
func BenchmarkColdSearch(b *testing.B) {
	dir := os.Getenv("NEXUS_BENCH_VAULT")
	if dir == "" {
		b.Skip("NEXUS_BENCH_VAULT not set")
	}
	v, err := vault.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		ix, err := Open(v, Options{NoServe: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := ix.Sync(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := ix.Search(ctx, Query{Text: "latency budget"}); err != nil {
			b.Fatal(err)
		}
		ix.Close()
	}
}
