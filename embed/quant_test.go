package embed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestDot8(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{0, 1, 7, 8, 15, 16, 17, 33, 256, 767} {
		a, b := make([]int8, n), make([]int8, n)
		var want int32
		for i := range a {
			a[i], b[i] = int8(rng.IntN(256)-128), int8(rng.IntN(256)-128)
			want += int32(a[i]) * int32(b[i])
		}
		if got := dot8(a, b); got != want {
			t.Errorf("n=%d: dot8 = %d, want %d", n, got, want)
		}
	}
}

func TestQuantizeKeepsCosine(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, dims := range []int{8, 384} {
		for range 50 {
			v, u := make([]float32, dims), make([]float32, dims)
			for i := range v {
				v[i], u[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			}
			qv, qu := make([]int8, dims), make([]int8, dims)
			fv, fu := quantize(v, qv), quantize(u, qu)
			got := float64(dot8(qv, qu)) * float64(fv) * float64(fu)
			if want := cosine(v, u); math.Abs(got-want) > 0.02 {
				t.Fatalf("dims %d: quantised cosine %.4f, exact %.4f", dims, got, want)
			}
		}
	}
	q := make([]int8, 4)
	if f := quantize([]float32{0, 0, 0, 0}, q); f != 0 {
		t.Fatalf("zero vector factor %v", f)
	}
	if f := quantize([]float32{1, float32(math.NaN()), 0, 0}, q); f != 0 {
		t.Fatalf("NaN vector factor %v", f)
	}
}

// TestPrefilterRecall measures how often the sign-bit prefilter keeps the
// true nearest rows: for queries near a stored vector (what a search for
// a paraphrase looks like) the nearest must always be found; for random
// queries over random vectors — the worst case, where every neighbour is
// weak (cosine about 0.25) — most of the top ten must be. The rest of a
// near query's top ten are such weak neighbours too.
func TestPrefilterRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 40,000-vector store")
	}
	const n, dims, k = 40_000, 256, 10
	if n*dims < prefilterFrom {
		t.Fatal("the store is too small for the prefilter to run")
	}
	s := benchStore(n, dims)
	rng := rand.New(rand.NewPCG(9, 9))
	near, random := 0.0, 0.0
	const queries = 40
	for qi := range queries {
		// Near: a stored vector plus noise of the same size (cosine ≈ 0.7).
		target := rng.IntN(n)
		q := make([]float32, dims)
		for j := range q {
			q[j] = float32(s.data[target*dims+j])/127*3 + float32(rng.NormFloat64())
		}
		fast, _ := s.Search(q, k)
		exact, _ := s.SearchExact(q, k)
		if fast[0].Path != exact[0].Path || exact[0].Path != fmt.Sprintf("n/%d.md", target) {
			t.Fatalf("query %d near row %d: prefiltered top %s, exact top %s", qi, target, fast[0].Path, exact[0].Path)
		}
		near += overlap(fast, exact)
		for j := range q {
			q[j] = float32(rng.NormFloat64())
		}
		fast, _ = s.Search(q, k)
		exact, _ = s.SearchExact(q, k)
		random += overlap(fast, exact)
	}
	near, random = near/queries, random/queries
	t.Logf("recall@%d of the prefilter: %.3f for near queries, %.3f for random ones", k, near, random)
	if near < 0.8 || random < 0.75 {
		t.Fatalf("prefilter recall@%d %.3f near, %.3f random", k, near, random)
	}
}

func overlap(a, b []Hit) float64 {
	in := map[string]bool{}
	for _, h := range b {
		in[h.Path] = true
	}
	n := 0
	for _, h := range a {
		if in[h.Path] {
			n++
		}
	}
	return float64(n) / float64(len(b))
}
