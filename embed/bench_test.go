package embed

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// benchStore is a store of n random vectors of dims, built in memory the
// way Sync leaves it (quantised, one section per vector).
func benchStore(n, dims int) *Store {
	rng := rand.New(rand.NewPCG(1, uint64(dims)))
	s := &Store{model: "bench", dims: dims, byKey: make(map[Key]int32, n)}
	s.data = make([]int8, 0, n*dims)
	s.keys = make([]Key, 0, n)
	s.factor = make([]float32, 0, n)
	v := make([]float32, dims)
	q := make([]int8, dims)
	secs := make([]Section, n)
	keys := make([]Key, n)
	for i := range n {
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		f := quantize(v, q)
		var k Key
		k[0], k[1], k[2], k[3] = byte(i), byte(i>>8), byte(i>>16), byte(i>>24)
		s.byKey[k] = int32(i)
		s.keys = append(s.keys, k)
		s.factor = append(s.factor, f)
		s.data = append(s.data, q...)
		secs[i] = Section{Path: fmt.Sprintf("n/%d.md", i), Line: 1}
		keys[i] = k
	}
	s.setSectionsLocked(secs, keys)
	return s
}

// BenchmarkSearch is one brute-force top-10 query over n vectors; it
// reports the median (p50) and p99 of the queries as well as the mean.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, dims := range []int{256, 384, 768} {
			modes := []string{"exact"}
			if n*dims >= prefilterFrom {
				modes = []string{"prefilter", "exact"}
			}
			s := benchStore(n, dims)
			for _, mode := range modes {
				b.Run(fmt.Sprintf("n=%d/dims=%d/%s", n, dims, mode), func(b *testing.B) {
					search := s.Search
					if mode == "exact" {
						search = s.SearchExact
					}
					rng := rand.New(rand.NewPCG(2, 2))
					queries := make([][]float32, 64)
					for i := range queries {
						queries[i] = make([]float32, dims)
						for j := range queries[i] {
							queries[i][j] = float32(rng.NormFloat64())
						}
					}
					search(queries[0], 10) // the sign bits are made once, by the first search
					var times []time.Duration
					b.ResetTimer()
					cpu0 := cpuTime()
					for i := 0; b.Loop(); i++ {
						t0 := time.Now()
						if _, err := search(queries[i%len(queries)], 10); err != nil {
							b.Fatal(err)
						}
						times = append(times, time.Since(t0))
					}
					b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(len(times)), "cpu-ms/op")
					sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
					b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
				})
			}
		}
	}
}

// BenchmarkStoreMemory measures the heap a store of 100k vectors takes,
// read from its file as OpenStore does.
func BenchmarkStoreMemory(b *testing.B) {
	for _, dims := range []int{256, 384, 768} {
		b.Run(fmt.Sprintf("n=100000/dims=%d", dims), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), StoreFile)
			rng := rand.New(rand.NewPCG(3, 3))
			vecs := make([][]float32, 1000)
			for i := range vecs {
				vecs[i] = make([]float32, dims)
				for j := range vecs[i] {
					vecs[i][j] = float32(rng.NormFloat64())
				}
			}
			// Write the file through the real append path, in batches.
			w := &Store{path: path, byKey: map[Key]int32{}}
			for at := 0; at < 100_000; at += 1000 {
				ks := make([]Key, 1000)
				for i := range ks {
					n := at + i
					ks[i] = Key{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}
				}
				if err := w.appendLocked("bench", dims, ks, vecs); err != nil {
					b.Fatal(err)
				}
			}
			w = nil
			var st Status
			for b.Loop() {
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				s, err := OpenStoreAt(path)
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&m1)
				st = s.Status()
				b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/(1<<20), "heap-MiB")
				runtime.KeepAlive(s)
			}
			b.ReportMetric(float64(st.Bytes)/(1<<20), "file-MiB")
			if st.Vectors != 100_000 {
				b.Fatalf("store holds %d vectors", st.Vectors)
			}
		})
	}
}

// benchModel writes a model2vec folder with a WordPiece vocabulary of
// vocab words and a dims-wide F16 matrix, and returns it with texts of
// about words words drawn from the vocabulary.
func benchModel(b *testing.B, vocab, dims, words int) (string, []string) {
	rng := rand.New(rand.NewPCG(4, 4))
	names := []string{"[PAD]", "[UNK]"}
	seen := map[string]bool{}
	for len(names) < vocab {
		var sb strings.Builder
		for range 3 + rng.IntN(7) {
			sb.WriteByte(byte('a' + rng.IntN(26)))
		}
		w := sb.String()
		if len(names)%5 == 0 {
			w = "##" + w[:3]
		}
		if !seen[w] {
			seen[w] = true
			names = append(names, w)
		}
	}
	dir := b.TempDir()
	v := map[string]int{}
	for i, n := range names {
		v[n] = i
	}
	var data []byte
	for range len(names) * dims {
		h := toF16(float32(rng.NormFloat64() * 0.1))
		data = append(data, byte(h), byte(h>>8))
	}
	writeSafetensors(b, filepath.Join(dir, "model.safetensors"), map[string]testTensor{"embeddings": {"F16", []int64{int64(len(names)), int64(dims)}, data}})
	writeJSON(b, filepath.Join(dir, "tokenizer.json"), map[string]any{
		"normalizer":    map[string]any{"type": "BertNormalizer", "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"model":         map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "vocab": v},
	})
	writeJSON(b, filepath.Join(dir, "config.json"), map[string]any{"normalize": true})
	texts := make([]string, 256)
	for i := range texts {
		var sb strings.Builder
		for j := range words {
			w := names[2+rng.IntN(len(names)-2)]
			w = strings.TrimPrefix(w, "##")
			if j%9 == 8 {
				w = strings.ToUpper(w[:1]) + w[1:] + "."
			}
			sb.WriteString(w + " ")
		}
		texts[i] = sb.String()
	}
	return dir, texts
}

// BenchmarkStaticEmbed is the static model's throughput on sections of
// about 80 words (a paragraph or two), in texts and tokens per second.
func BenchmarkStaticEmbed(b *testing.B) {
	for _, dims := range []int{256, 512} {
		b.Run(fmt.Sprintf("vocab=30000/dims=%d", dims), func(b *testing.B) {
			dir, texts := benchModel(b, 30_000, dims, 80)
			s, err := LoadStatic(dir)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			before := s.Usage().Tokens
			n := 0
			start := time.Now()
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := s.Embed(ctx, texts[n%len(texts):n%len(texts)+1]); err != nil {
					b.Fatal(err)
				}
				n++
			}
			secs := time.Since(start).Seconds()
			if cpu := (cpuTime() - cpu0).Seconds(); cpu > 0 {
				b.ReportMetric(float64(n)/cpu, "texts/cpu-s")
				b.ReportMetric(float64(s.Usage().Tokens-before)/cpu, "tokens/cpu-s")
			}
			b.ReportMetric(float64(n)/secs, "texts/s")
			b.ReportMetric(float64(s.Usage().Tokens-before)/secs, "tokens/s")
		})
	}
}

// BenchmarkDot8 is the inner loop of a search: one int8 dot product.
func BenchmarkDot8(b *testing.B) {
	for _, dims := range []int{256, 768} {
		b.Run(fmt.Sprintf("dims=%d", dims), func(b *testing.B) {
			x, y := make([]int8, dims), make([]int8, dims)
			for i := range x {
				x[i], y[i] = int8(i), int8(3*i)
			}
			var sink int32
			cpu0, n := cpuTime(), 0
			for b.Loop() {
				sink += dot8(x, y)
				n++
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(n), "cpu-ns/op")
			_ = sink
		})
	}
}

// BenchmarkSyncAllCached is a rebuild that finds every text in the store:
// hashing and looking up 10k sections, no provider call.
func BenchmarkSyncAllCached(b *testing.B) {
	ctx := context.Background()
	s, err := OpenStoreAt(filepath.Join(b.TempDir(), StoreFile))
	if err != nil {
		b.Fatal(err)
	}
	p := &hashProvider{model: "m", dims: 256}
	secs := testSections(10_000)
	for i := range secs {
		secs[i].Text = strings.Repeat(secs[i].Text+" ", 20) // ~600 bytes
	}
	if _, err := s.Sync(ctx, p, secs, SyncOptions{BatchSize: 500}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		cost, err := s.Sync(ctx, p, secs, SyncOptions{})
		if err != nil || cost.Embedded != 0 {
			b.Fatalf("%+v %v", cost, err)
		}
	}
}
