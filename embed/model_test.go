package embed

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// testTensor is a tensor to write into a generated safetensors file.
type testTensor struct {
	dtype string
	shape []int64
	data  []byte
}

// writeSafetensors writes tensors as a safetensors file.
func writeSafetensors(t testing.TB, path string, tensors map[string]testTensor) {
	t.Helper()
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var data []byte
	for _, n := range names {
		tt := tensors[n]
		header[n] = map[string]any{"dtype": tt.dtype, "shape": tt.shape, "data_offsets": []int{len(data), len(data) + len(tt.data)}}
		data = append(data, tt.data...)
	}
	hj, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	for len(hj)%8 != 0 {
		hj = append(hj, ' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(hj)))
	out = append(append(out, hj...), data...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

func f32Bytes(m [][]float32) []byte {
	var out []byte
	for _, row := range m {
		for _, x := range row {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
		}
	}
	return out
}

// toF16 converts x to IEEE half precision (normal numbers, truncating).
func toF16(x float32) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	exp := int((b>>23)&0xff) - 127 + 15
	frac := uint16((b >> 13) & 0x3ff)
	if x == 0 {
		return sign
	}
	if exp <= 0 || exp >= 31 {
		return sign // the test values are small normal numbers
	}
	return sign | uint16(exp)<<10 | frac
}

// wordPieceVocab is the generated BERT-style vocabulary.
var wordPieceVocab = []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "dog", "sat", "on", "mat", "car", "drive", "road", "cafe", "##s", "##ing", "un", "##do", "change", ",", ".", "!", "version", "history", "猫"}

// testModel is what writeModel generates.
type testModel struct {
	dtype   string // F32, F16, I8
	unigram bool   // a Unigram tokenizer with Metaspace instead of WordPiece
	weights []float32
	mapping []int64 // token → row
	rows    [][]float32
	noNorm  bool
}

// matrix is the generated embeddings: "cat" and "dog" share a direction,
// "car", "drive" and "road" another, and the rest are spread out.
func testMatrix(n, dims int) [][]float32 {
	m := make([][]float32, n)
	for i := range m {
		m[i] = make([]float32, dims)
		m[i][i%dims] = 0.5
		m[i][(i*7+3)%dims] += 0.25
	}
	group := func(dir int, ids ...int) {
		for _, id := range ids {
			if id < n {
				m[id][dir] += 2
			}
		}
	}
	group(0, 5, 6)       // cat, dog
	group(1, 10, 11, 12) // car, drive, road
	return m
}

// writeModel writes a model2vec folder for tm into a new temp folder.
func writeModel(t testing.TB, tm testModel) string {
	t.Helper()
	dir := t.TempDir()
	dims := 8
	var vocabLen int
	var tok map[string]any
	if tm.unigram {
		pieces := []any{[]any{"<unk>", 0.0}, []any{"▁the", -1.0}, []any{"▁cat", -2.0}, []any{"s", -3.0}, []any{"▁", -4.0},
			[]any{"c", -5.0}, []any{"a", -5.0}, []any{"t", -5.0}, []any{"▁ca", -6.0}, []any{"▁dog", -2.0}, []any{"▁고양이", -2.0}, []any{"를", -3.0}}
		vocabLen = len(pieces)
		tok = map[string]any{
			"version":       "1.0",
			"normalizer":    map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "NFKC"}, map[string]any{"type": "Lowercase"}}},
			"pre_tokenizer": map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true},
			"model":         map[string]any{"type": "Unigram", "unk_id": 0, "vocab": pieces, "byte_fallback": false},
		}
	} else {
		vocab := map[string]int{}
		for i, w := range wordPieceVocab {
			vocab[w] = i
		}
		vocabLen = len(vocab)
		tok = map[string]any{
			"version":       "1.0",
			"added_tokens":  []any{map[string]any{"id": 0, "content": "[PAD]", "special": true}},
			"normalizer":    map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
			"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
			"model":         map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": vocab},
		}
	}
	rows := tm.rows
	if rows == nil {
		n := vocabLen
		if tm.mapping != nil {
			n = 0
			for _, r := range tm.mapping {
				n = max(n, int(r)+1)
			}
		}
		rows = testMatrix(n, dims)
	}
	var emb testTensor
	switch tm.dtype {
	case "", "F32":
		emb = testTensor{"F32", []int64{int64(len(rows)), int64(len(rows[0]))}, f32Bytes(rows)}
	case "F16":
		var b []byte
		for _, r := range rows {
			for _, x := range r {
				b = binary.LittleEndian.AppendUint16(b, toF16(x))
			}
		}
		emb = testTensor{"F16", []int64{int64(len(rows)), int64(len(rows[0]))}, b}
	case "I8":
		var b []byte
		for _, r := range rows {
			for _, x := range r {
				b = append(b, byte(int8(math.Round(float64(x)*127/2.75))))
			}
		}
		emb = testTensor{"I8", []int64{int64(len(rows)), int64(len(rows[0]))}, b}
	}
	tensors := map[string]testTensor{"embeddings": emb}
	if tm.weights != nil {
		tensors["weights"] = testTensor{"F32", []int64{int64(len(tm.weights))}, f32Bytes([][]float32{tm.weights})}
	}
	if tm.mapping != nil {
		var b []byte
		for _, r := range tm.mapping {
			b = binary.LittleEndian.AppendUint64(b, uint64(r))
		}
		tensors["mapping"] = testTensor{"I64", []int64{int64(len(tm.mapping))}, b}
	}
	writeSafetensors(t, filepath.Join(dir, "model.safetensors"), tensors)
	writeJSON(t, filepath.Join(dir, "tokenizer.json"), tok)
	writeJSON(t, filepath.Join(dir, "config.json"), map[string]any{"model_type": "model2vec", "architectures": []string{"StaticModel"}, "hidden_dim": dims, "normalize": !tm.noNorm})
	return dir
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
