package embed

import (
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
