package embed

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func decode(t *testing.T, dir string, ids []int) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[int]string{}
	if strings.Contains(string(data), `"Unigram"`) {
		for i, p := range []string{"<unk>", "▁the", "▁cat", "s", "▁", "c", "a", "t", "▁ca", "▁dog", "▁고양이", "를"} {
			names[i] = p
		}
	} else {
		for i, w := range wordPieceVocab {
			names[i] = w
		}
	}
	var out []string
	for _, id := range ids {
		out = append(out, names[id])
	}
	return strings.Join(out, " ")
}

func TestTokenizers(t *testing.T) {
	wp := writeModel(t, testModel{})
	ug := writeModel(t, testModel{unigram: true})
	for _, tc := range []struct {
		dir, text, want string
	}{
		{wp, "The cats sat on the mat.", "the cat ##s sat on the mat ."},
		{wp, "Café", "cafe"},
		{wp, "undo the change", "un ##do the change"},
		{wp, "drives", "drive ##s"},
		{wp, "xyz cat", "[UNK] cat"},
		{wp, "cat,dog!", "cat , dog !"},
		{wp, "고양이猫", "[UNK] 猫"},
		{wp, "\u200bcat\tdog\n", "cat dog"},
		{wp, "VERSION history", "version history"},
		{wp, "", ""},
		{wp, strings.Repeat("cat", 40), "[UNK]"}, // longer than max_input_chars_per_word
		{ug, "The cats", "▁the ▁cat s"},
		{ug, "ca", "▁ca"},
		{ug, "the dog", "▁the ▁dog"},
		{ug, "고양이를", "▁고양이 를"},
		{ug, "xyz", "▁ <unk>"},
		{ug, "Ｃat", "▁cat"}, // NFKC folds the full-width letter
	} {
		tok := mustStatic(t, tc.dir).tok
		if got := decode(t, tc.dir, tok.encode(tc.text)); got != tc.want {
			t.Errorf("%s: encode(%q) = %q, want %q", filepath.Base(tc.dir), tc.text, got, tc.want)
		}
	}
}

func mustStatic(t testing.TB, dir string) *Static {
	t.Helper()
	s, err := LoadStatic(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / math.Sqrt(n))
	}
	return out
}

func near(a, b []float32, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > tol {
			return false
		}
	}
	return true
}

func TestStaticEmbed(t *testing.T) {
	m := testMatrix(len(wordPieceVocab), 8)
	s := mustStatic(t, writeModel(t, testModel{}))
	if s.Dims() != 8 || s.Remote() {
		t.Fatalf("Dims %d Remote %v", s.Dims(), s.Remote())
	}
	vecs, err := s.Embed(context.Background(), []string{"cat", "Cat dog", "xyz qqq", "", "car", "the road"})
	if err != nil {
		t.Fatal(err)
	}
	mean := make([]float32, 8)
	for j := range mean {
		mean[j] = (m[5][j] + m[6][j]) / 2
	}
	for _, tc := range []struct {
		name string
		got  []float32
		want []float32
	}{
		{"one token is its row, normalised", vecs[0], unit(m[5])},
		{"two tokens are their mean, normalised", vecs[1], unit(mean)},
		{"no known token is zero", vecs[2], make([]float32, 8)},
		{"empty text is zero", vecs[3], make([]float32, 8)},
	} {
		if !near(tc.got, tc.want, 1e-6) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if c1, c2 := cosine(vecs[0], vecs[1]), cosine(vecs[0], vecs[4]); c1 <= c2 {
		t.Errorf("cat~dog %.3f not nearer than cat~car %.3f", c1, c2)
	}
	if c := cosine(vecs[4], vecs[5]); c < 0.7 {
		t.Errorf("car~road %.3f: the car group is not near", c)
	}
	if u := s.Usage(); u.Tokens != 6 {
		t.Errorf("tokens counted %d, want 6 (unknown ones left out)", u.Tokens)
	}
}

func TestStaticVariants(t *testing.T) {
	ref := mustStatic(t, writeModel(t, testModel{}))
	texts := []string{"cat", "the cat sat on the mat", "drive on the road", "undo change"}
	want, _ := ref.Embed(context.Background(), texts)
	weights := make([]float32, len(wordPieceVocab))
	for i := range weights {
		weights[i] = 1
	}
	weights[6] = 0 // "dog" counts for nothing
	mapping := make([]int64, len(wordPieceVocab))
	for i := range mapping {
		mapping[i] = int64(i % 9)
	}
	m := testMatrix(9, 8)
	for _, tc := range []struct {
		name  string
		tm    testModel
		texts []string
		want  [][]float32
		tol   float64
	}{
		{"f16", testModel{dtype: "F16"}, texts, want, 0.01},
		{"int8", testModel{dtype: "I8"}, texts, want, 0.03},
		{"weights", testModel{weights: weights}, []string{"cat dog"}, [][]float32{unit(testMatrix(len(wordPieceVocab), 8)[5])}, 1e-6},
		{"mapping", testModel{mapping: mapping}, []string{"cat", "road"}, [][]float32{unit(m[5]), unit(m[12%9])}, 1e-6},
		{"not normalised", testModel{noNorm: true}, []string{"cat"}, [][]float32{testMatrix(len(wordPieceVocab), 8)[5]}, 1e-6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustStatic(t, writeModel(t, tc.tm))
			got, err := s.Embed(context.Background(), tc.texts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if !near(got[i], tc.want[i], tc.tol) {
					t.Errorf("%q: got %v, want %v", tc.texts[i], got[i], tc.want[i])
				}
			}
		})
	}
}

func TestStaticModelIdentity(t *testing.T) {
	dir := writeModel(t, testModel{})
	a, b := mustStatic(t, dir), mustStatic(t, dir)
	if a.Model() != b.Model() {
		t.Fatalf("one folder, two identities: %q, %q", a.Model(), b.Model())
	}
	// Same folder name, other weights: another model.
	other := writeModel(t, testModel{dtype: "F16"})
	c := mustStatic(t, other)
	if c.Model() == a.Model() {
		t.Fatal("two models, one identity")
	}
	if !strings.HasPrefix(a.Model(), "static ") || !strings.Contains(a.Model(), "dims=8") {
		t.Fatalf("identity %q", a.Model())
	}
}

func TestStaticNotAModel(t *testing.T) {
	good := writeModel(t, testModel{})
	copyModel := func(t *testing.T, edit func(dir string)) string {
		dir := t.TempDir()
		for _, f := range []string{"model.safetensors", "tokenizer.json", "config.json"} {
			data, err := os.ReadFile(filepath.Join(good, f))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, f), data, 0o644)
		}
		edit(dir)
		return dir
	}
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
		want string
	}{
		{"missing folder", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, "no such folder"},
		{"a file", func(t *testing.T) string { return filepath.Join(good, "config.json") }, "not a folder"},
		{"empty folder", func(t *testing.T) string { return t.TempDir() }, "no model.safetensors"},
		{"a gguf file renamed", func(t *testing.T) string {
			return copyModel(t, func(d string) {
				os.WriteFile(filepath.Join(d, "model.safetensors"), []byte("GGUF\x03\x00\x00\x00 not safetensors at all"), 0o644)
			})
		}, "header length"},
		{"no embeddings tensor", func(t *testing.T) string {
			return copyModel(t, func(d string) {
				writeSafetensors(t, filepath.Join(d, "model.safetensors"), map[string]testTensor{"weight": {"F32", []int64{1, 1}, f32Bytes([][]float32{{1}})}})
			})
		}, `no tensor "embeddings"`},
		{"fewer rows than tokens", func(t *testing.T) string {
			return copyModel(t, func(d string) {
				writeSafetensors(t, filepath.Join(d, "model.safetensors"), map[string]testTensor{"embeddings": {"F32", []int64{2, 1}, f32Bytes([][]float32{{1}, {2}})}})
			})
		}, "2 embedding rows for a tokenizer of 25 tokens"},
		{"no tokenizer", func(t *testing.T) string {
			return copyModel(t, func(d string) { os.Remove(filepath.Join(d, "tokenizer.json")) })
		}, "no tokenizer.json"},
		{"a BPE tokenizer", func(t *testing.T) string {
			return copyModel(t, func(d string) {
				os.WriteFile(filepath.Join(d, "tokenizer.json"), []byte(`{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`), 0o644)
			})
		}, `model "BPE" is not supported`},
		{"no config", func(t *testing.T) string {
			return copyModel(t, func(d string) { os.Remove(filepath.Join(d, "config.json")) })
		}, "no config.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadStatic(tc.dir(t))
			if !errors.Is(err, ErrNotModel) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadStatic: %v, want ErrNotModel saying %q", err, tc.want)
			}
			if n := Notice(err); strings.Contains(n, "\n") {
				t.Fatalf("notice on two lines: %q", n)
			}
		})
	}
}

func TestStaticSentenceTransformersLayout(t *testing.T) {
	src := writeModel(t, testModel{})
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "0_StaticEmbedding"), 0o755)
	st, _ := os.ReadFile(filepath.Join(src, "model.safetensors"))
	// Rename the tensor: same bytes, the sentence-transformers name.
	s := mustStatic(t, src)
	writeSafetensors(t, filepath.Join(dir, "0_StaticEmbedding", "model.safetensors"), map[string]testTensor{"embedding.weight": {s.emb.dtype, s.emb.shape, s.emb.data}})
	_ = st
	tok, _ := os.ReadFile(filepath.Join(src, "tokenizer.json"))
	os.WriteFile(filepath.Join(dir, "0_StaticEmbedding", "tokenizer.json"), tok, 0o644)
	os.WriteFile(filepath.Join(dir, "config_sentence_transformers.json"), []byte(`{}`), 0o644)
	got := mustStatic(t, dir)
	v, _ := got.Embed(context.Background(), []string{"cat"})
	w, _ := s.Embed(context.Background(), []string{"cat"})
	if cosine(v[0], w[0]) < 0.9999 {
		t.Fatalf("sentence-transformers layout embeds otherwise: %v vs %v", v[0], w[0])
	}
}
