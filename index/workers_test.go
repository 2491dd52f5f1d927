package index

import (
	"context"
	"fmt"
	"testing"
)

// TestWorkersSameIndex: a build and a sync on one worker (as a server
// gives them, leaving a core to its calls) index the same documents and
// terms as on every core.
func TestWorkersSameIndex(t *testing.T) {
	v, _ := rebuildVault(t)
	ctx := context.Background()
	ref := mustOpen(t, v, Options{MemoryBudget: 1})
	if err := ref.Rebuild(ctx, nil); err != nil {
		t.Fatal(err)
	}
	wantDocs, wantTerms := fmt.Sprint(docSet(t, ref)), fmt.Sprint(termSet(t, ref))
	ref.Close()
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprint(workers, " workers"), func(t *testing.T) {
			ix := mustOpen(t, v, Options{MemoryBudget: 1, Workers: workers})
			if err := ix.Rebuild(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if docs, terms := fmt.Sprint(docSet(t, ix)), fmt.Sprint(termSet(t, ix)); docs != wantDocs || terms != wantTerms {
				t.Fatalf("with %d workers the index differs: %d vs %d bytes of docs, %d vs %d of terms", workers, len(docs), len(wantDocs), len(terms), len(wantTerms))
			}
		})
	}
}
