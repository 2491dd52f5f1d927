package hybrid_test

import (
	"context"
	"hash/fnv"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/nexus-memory/nexus/hybrid"
	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/index/indextest"
	"github.com/nexus-memory/nexus/vault"
)

// hashModel is a local provider with no cost of its own to speak of: a
// text's vector sums a pseudo-random vector per word. It stands in for
// a model so that the latency measured is Nexus's, not an endpoint's.
type hashModel struct{ dims int }

func (h hashModel) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, h.dims)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			f := fnv.New64a()
			f.Write([]byte(w))
			x := f.Sum64()
			for j := range 8 {
				v[int((x>>(8*j))%uint64(h.dims))] += float32(int(x>>j&1)*2 - 1)
			}
		}
		v[0] += 0.01
		out[i] = v
	}
	return out, nil
}
func (h hashModel) Model() string { return "hash-" + strconv.Itoa(h.dims) }
func (h hashModel) Dims() int     { return h.dims }
func (h hashModel) Remote() bool  { return false }

// BenchmarkHybridSearch measures a search by words and by words and
// meaning on the same vault in the same run (docs/benchmarks.md): wall
// p50/p99 and CPU per search of 24 queries (the planted needles and four
// common ones), a top-10 search each. NEXUS_HYBRID_NOTES sets the vault's
// size (default 2,000 notes; 6,000 notes are about 13,000 sections).
//
//	NEXUS_HYBRID_NOTES=6000 go test ./hybrid -run '^$' -bench HybridSearch -benchtime 5x
func BenchmarkHybridSearch(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("NEXUS_HYBRID_NOTES"))
	if n <= 0 {
		n = 2000
	}
	dir := b.TempDir()
	if _, _, err := vault.Init(dir); err != nil {
		b.Fatal(err)
	}
	gen, err := indextest.Generate(dir, indextest.Options{Notes: n, Seed: 7, Needles: true})
	if err != nil {
		b.Fatal(err)
	}
	v, err := vault.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	ix, err := index.Open(v, index.Options{NoServe: true})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	if err := ix.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	p := hashModel{dims: 256}
	start := time.Now()
	rep, err := hybrid.NewEmbedder(v, p).Run(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d notes, %d sections embedded in %v (%d dims, store %d bytes in memory)", n, rep.Cost.Sections, time.Since(start).Round(time.Millisecond), p.dims, rep.Status.Memory)
	start = time.Now()
	rep, err = hybrid.NewEmbedder(v, p).Run(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("again, nothing changed: %d cached of %d, %d embedded, %v (a fresh lister parses every note)", rep.Cost.Cached, rep.Cost.Sections, rep.Cost.Embedded, time.Since(start).Round(time.Millisecond))

	var queries []string
	for _, nd := range gen.Needles {
		queries = append(queries, nd.Query)
	}
	queries = append(queries, "deploy staging server", "meeting notes project", "how do I undo a change", "배포 실패")
	s := hybrid.NewSearcher(v, ix, hybrid.Options{Provider: p})
	for _, c := range []struct {
		name string
		run  func(q string) error
	}{
		{"words", func(q string) error { _, err := ix.Search(ctx, index.Query{Text: q}); return err }},
		{"hybrid", func(q string) error {
			res, err := s.Search(ctx, index.Query{Text: q}, nil)
			if err == nil && res.Notice != "" {
				b.Fatalf("meaning off: %s", res.Notice)
			}
			return err
		}},
		{"hybrid+2also", func(q string) error {
			_, err := s.Search(ctx, index.Query{Text: q}, []string{q + " notes", "다른 말"})
			return err
		}},
	} {
		for _, q := range queries { // warm up
			if err := c.run(q); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(c.name, func(b *testing.B) {
			var d []time.Duration
			cpu0 := cpuTime()
			for b.Loop() {
				for _, q := range queries {
					t0 := time.Now()
					if err := c.run(q); err != nil {
						b.Fatal(err)
					}
					d = append(d, time.Since(t0))
				}
			}
			slices.Sort(d)
			b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(d[int(math.Ceil(float64(len(d))*0.99))-1].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(len(d)), "cpu-ms/search")
		})
	}
}
