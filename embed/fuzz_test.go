package embed

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"testing"
)

// FuzzSafetensorsHeader feeds arbitrary files to the safetensors parser:
// it must never panic, and a tensor it accepts must be readable in full.
func FuzzSafetensorsHeader(f *testing.F) {
	header := func(js string) []byte {
		return append(binary.LittleEndian.AppendUint64(nil, uint64(len(js))), js...)
	}
	f.Add(append(header(`{"embeddings":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}`), make([]byte, 16)...))
	f.Add(append(header(`{"__metadata__":{"a":"b"},"e":{"dtype":"F16","shape":[1,3],"data_offsets":[0,6]},"w":{"dtype":"I8","shape":[2],"data_offsets":[6,8]}}`), make([]byte, 8)...))
	f.Add(header(`{"e":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}}`))
	f.Add(header(`{"e":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"f":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}`))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Add([]byte("GGUF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		st, err := parseSafetensorsHeader(r, int64(len(data)))
		if err != nil {
			return
		}
		for name, ti := range st.tensors {
			tn, err := st.read(r, name)
			if err != nil {
				continue
			}
			if int64(len(tn.data)) != ti.Offsets[1]-ti.Offsets[0] {
				t.Fatalf("tensor %q: read %d bytes, offsets say %d", name, len(tn.data), ti.Offsets[1]-ti.Offsets[0])
			}
			n := len(tn.data) / int(dtypeSize[tn.dtype])
			for i := 0; i < n && i < 64; i++ {
				tn.float(i)
				tn.integer(i)
			}
		}
	})
}

// FuzzTokenizer feeds arbitrary tokenizer.json files and texts to the
// loader and the tokenizer: never a panic, and every id within the
// vocabulary.
func FuzzTokenizer(f *testing.F) {
	wp, _ := json.Marshal(map[string]any{
		"normalizer":    map[string]any{"type": "BertNormalizer", "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"model":         map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "vocab": map[string]int{"[UNK]": 0, "cat": 1, "##s": 2, "c": 3, "##a": 4}},
	})
	ug, _ := json.Marshal(map[string]any{
		"normalizer":    map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "NFKC"}, map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": " {2,}"}, "content": " "}}},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{map[string]any{"type": "Digits", "individual_digits": true}, map[string]any{"type": "Metaspace", "replacement": "▁"}}},
		"model":         map[string]any{"type": "Unigram", "unk_id": 0, "vocab": []any{[]any{"<unk>", 0}, []any{"▁a", -1}, []any{"b", -2}, []any{"▁", -3}}},
	})
	wl, _ := json.Marshal(map[string]any{
		"pre_tokenizer": map[string]any{"type": "Whitespace"},
		"model":         map[string]any{"type": "WordLevel", "unk_token": "?", "vocab": map[string]int{"?": 0, "hello": 1}},
	})
	for _, seed := range [][]byte{wp, ug, wl, []byte(`{"model":{"type":"Unigram","vocab":[["a",1e308],["b",-1e308]]}}`), []byte(`{"model":{"type":"WordPiece","vocab":{"a":67108864}}}`)} {
		f.Add(seed, "The cats sat, café 고양이를 123  ▁x")
	}
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		tok, err := parseTokenizer(data)
		if err != nil {
			return
		}
		if len(text) > 1<<12 {
			text = text[:1<<12]
		}
		for _, id := range tok.encode(text) {
			if id < 0 || id >= tok.vocabSize {
				t.Fatalf("id %d outside a vocabulary of %d", id, tok.vocabSize)
			}
		}
	})
}
