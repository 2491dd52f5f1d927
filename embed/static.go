package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"unicode/utf8"
)

// Static is a [Provider] for a model2vec static-embedding model, loaded
// in process: a text's vector is the mean of its tokens' rows of the
// embedding matrix (each row scaled by the token's weight when the model
// has weights), normalised to unit length when the model's config says
// normalize. Safe for concurrent use; it holds the matrix in memory as
// stored (f16 stays f16).
type Static struct {
	dir       string
	id        string
	tok       *tokenizer
	emb       *tensor // [rows, dims]
	dims      int
	weights   *tensor // [vocab] or nil
	mapping   *tensor // [vocab] token → row, or nil
	normalize bool
	maxChars  int // text cut to this many characters before tokenising
	tokens    atomic.Int64
}

// maxTokens is model2vec's default max_length: tokens past it are ignored.
const maxTokens = 512

// The file layouts of a model2vec folder: its own, and the one
// sentence-transformers saves a StaticEmbedding module in.
var layouts = []struct{ model, tokenizer, config, tensor string }{
	{"model.safetensors", "tokenizer.json", "config.json", "embeddings"},
	{"0_StaticEmbedding/model.safetensors", "0_StaticEmbedding/tokenizer.json", "config_sentence_transformers.json", "embedding.weight"},
}

// LoadStatic loads the model2vec model in folder dir: model.safetensors
// (an "embeddings" matrix of F32, F16, BF16 or I8, optionally "weights"
// and "mapping"), tokenizer.json and config.json. Anything that makes it
// not such a model is an [*Error] of kind [ErrNotModel] naming what.
func LoadStatic(dir string) (*Static, error) {
	notModel := func(format string, args ...any) error {
		return errorf("static", ErrNotModel, nil, "%s: %s", dir, fmt.Sprintf(format, args...))
	}
	fi, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, notModel("no such folder")
		}
		return nil, errorf("static", ErrNotModel, err, "%s", dir)
	}
	if !fi.IsDir() {
		return nil, notModel("not a folder (search.embeddings.path names the model's folder)")
	}
	layout := layouts[0]
	for _, l := range layouts {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(l.model))); err == nil {
			layout = l
			break
		}
	}
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(layout.model)))
	if err != nil {
		return nil, notModel("no model.safetensors")
	}
	defer f.Close()
	fi, err = f.Stat()
	if err != nil {
		return nil, errorf("static", ErrNotModel, err, "%s", dir)
	}
	st, err := parseSafetensorsHeader(f, fi.Size())
	if err != nil {
		return nil, errorf("static", ErrNotModel, err, "%s", dir)
	}
	emb, err := st.read(f, layout.tensor)
	if err != nil {
		return nil, errorf("static", ErrNotModel, err, "%s", dir)
	}
	switch emb.dtype {
	case "F32", "F16", "BF16", "F64", "I8":
	default:
		return nil, notModel("embeddings of dtype %s", emb.dtype)
	}
	if len(emb.shape) != 2 || emb.shape[0] < 1 || emb.shape[1] < 1 || emb.shape[1] > 65536 {
		return nil, notModel("embeddings of shape %v, want [tokens, dimensions]", emb.shape)
	}
	s := &Static{dir: dir, emb: emb, dims: int(emb.shape[1])}
	rows := emb.shape[0]

	tokData, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(layout.tokenizer)))
	if err != nil {
		return nil, notModel("no tokenizer.json")
	}
	if s.tok, err = parseTokenizer(tokData); err != nil {
		return nil, errorf("static", ErrNotModel, err, "%s", dir)
	}
	vocab := int64(s.tok.vocabSize)

	if _, ok := st.tensors["mapping"]; ok {
		if s.mapping, err = st.read(f, "mapping"); err != nil {
			return nil, errorf("static", ErrNotModel, err, "%s", dir)
		}
		if len(s.mapping.shape) != 1 || s.mapping.shape[0] < vocab {
			return nil, notModel("mapping of shape %v for %d tokens", s.mapping.shape, vocab)
		}
		for i := range int(s.mapping.shape[0]) {
			if r := s.mapping.integer(i); r < 0 || r >= rows {
				return nil, notModel("mapping sends token %d to row %d of %d", i, r, rows)
			}
		}
	} else if rows < vocab {
		return nil, notModel("%d embedding rows for a tokenizer of %d tokens", rows, vocab)
	}
	if _, ok := st.tensors["weights"]; ok {
		if s.weights, err = st.read(f, "weights"); err != nil {
			return nil, errorf("static", ErrNotModel, err, "%s", dir)
		}
		if len(s.weights.shape) != 1 || s.weights.shape[0] < vocab {
			return nil, notModel("weights of shape %v for %d tokens", s.weights.shape, vocab)
		}
	}

	cfgData, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(layout.config)))
	if err != nil {
		return nil, notModel("no %s", layout.config)
	}
	var cfg struct {
		Normalize *bool `json:"normalize"`
	}
	if err := json.Unmarshal(cfgData, &cfg); err != nil {
		return nil, notModel("%s is not JSON: %v", layout.config, err)
	}
	s.normalize = cfg.Normalize != nil && *cfg.Normalize
	s.maxChars = maxTokens * medianTokenLength(tokData)

	// The identity: the model's bytes, cheaply — header, tokenizer,
	// config, and the matrix's first and last rows.
	h := sha256.New()
	h.Write(st.header)
	h.Write(tokData)
	h.Write(cfgData)
	rowBytes := len(emb.data) / int(rows)
	h.Write(emb.data[:min(len(emb.data), 64*rowBytes)])
	h.Write(emb.data[max(0, len(emb.data)-64*rowBytes):])
	s.id = fmt.Sprintf("static %s sha256:%s dims=%d", filepath.Base(filepath.Clean(dir)), hex.EncodeToString(h.Sum(nil))[:16], s.dims)
	return s, nil
}

// medianTokenLength is model2vec's median token length in characters,
// which with [maxTokens] bounds how much of a text is tokenised.
func medianTokenLength(tokData []byte) int {
	var tj struct {
		Model struct {
			Vocab json.RawMessage `json:"vocab"`
		} `json:"model"`
	}
	if json.Unmarshal(tokData, &tj) != nil {
		return 16
	}
	var lens []int
	var m map[string]int
	var l [][2]json.RawMessage
	if json.Unmarshal(tj.Model.Vocab, &m) == nil {
		for t := range m {
			lens = append(lens, utf8.RuneCountInString(t))
		}
	} else if json.Unmarshal(tj.Model.Vocab, &l) == nil {
		for _, p := range l {
			var t string
			if json.Unmarshal(p[0], &t) == nil {
				lens = append(lens, utf8.RuneCountInString(t))
			}
		}
	}
	if len(lens) == 0 {
		return 16
	}
	sort.Ints(lens)
	return max(1, lens[len(lens)/2])
}

// Model is "static FOLDER sha256:HASH dims=N"; the hash covers the
// tokenizer, config, tensor header and the matrix's first and last rows.
func (s *Static) Model() string { return s.id }

// Dims is the matrix's width.
func (s *Static) Dims() int { return s.dims }

// Remote is false: nothing leaves the machine.
func (s *Static) Remote() bool { return false }

// Usage counts the tokens embedded so far; Requests stays 0.
func (s *Static) Usage() Usage { return Usage{Tokens: s.tokens.Load()} }

// Embed returns one vector per text. A text with no known token gets the
// zero vector. It fails only when ctx is done.
func (s *Static) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%64 == 0 && ctx.Err() != nil {
			return nil, errorf("static", ErrTimeout, ctx.Err(), "embedding stopped")
		}
		out[i] = s.embedOne(t)
	}
	return out, nil
}

func (s *Static) embedOne(text string) []float32 {
	if utf8.RuneCountInString(text) > s.maxChars {
		n := 0
		for i := range text {
			if n == s.maxChars {
				text = text[:i]
				break
			}
			n++
		}
	}
	ids := s.tok.encode(text)
	sum := make([]float32, s.dims)
	n := 0
	for _, id := range ids {
		if id == s.tok.unkID || id < 0 {
			continue
		}
		if n == maxTokens {
			break
		}
		row := id
		if s.mapping != nil {
			if id >= int(s.mapping.shape[0]) {
				continue
			}
			row = int(s.mapping.integer(id))
		}
		if row >= int(s.emb.shape[0]) {
			continue
		}
		w := float32(1)
		if s.weights != nil && id < int(s.weights.shape[0]) {
			w = s.weights.float(id)
		}
		s.emb.addRow(sum, row, w)
		n++
	}
	s.tokens.Add(int64(n))
	v := make([]float32, s.dims)
	if n == 0 {
		return v
	}
	var norm float64
	for j := range sum {
		m := float64(sum[j]) / float64(n)
		norm += m * m
	}
	scale := 1 / float64(n)
	if s.normalize {
		scale /= math.Sqrt(norm) + 1e-32
	}
	for j := range v {
		v[j] = float32(float64(sum[j]) * scale)
	}
	return v
}

var _ Provider = (*Static)(nil)
var _ Meter = (*Static)(nil)
