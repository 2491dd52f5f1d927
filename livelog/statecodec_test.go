package livelog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// sameWitness compares two witnesses field by field (times by instant and
// by their text, which keeps the zone).
func sameWitness(a, b witness) error {
	if (a.Feeds == nil) != (b.Feeds == nil) || (a.Files == nil) != (b.Files == nil) || len(a.Feeds) != len(b.Feeds) || len(a.Files) != len(b.Files) {
		return fmt.Errorf("maps differ: %+v vs %+v", a, b)
	}
	for s, m := range a.Feeds {
		n, ok := b.Feeds[s]
		if !ok || (m == nil) != (n == nil) || len(m) != len(n) {
			return fmt.Errorf("stream %q differs", s)
		}
		for w, x := range m {
			y, ok := n[w]
			if !ok || x.Seq != y.Seq || x.Hash != y.Hash || !x.Time.Equal(y.Time) || x.Time.Format(time.RFC3339Nano) != y.Time.Format(time.RFC3339Nano) {
				return fmt.Errorf("feed %q %q: %+v vs %+v", s, w, x, y)
			}
		}
	}
	for r, x := range a.Files {
		if y, ok := b.Files[r]; !ok || x != y {
			return fmt.Errorf("file %q: %+v vs %+v", r, x, b.Files[r])
		}
	}
	return nil
}

func sameHint(a, b feedHint) error {
	if a.File != b.File || a.Offset != b.Offset || a.Anchor != b.Anchor || a.Seq != b.Seq || a.Hash != b.Hash ||
		(a.Cited == nil) != (b.Cited == nil) || len(a.Cited) != len(b.Cited) {
		return fmt.Errorf("%+v vs %+v", a, b)
	}
	for k, v := range a.Cited {
		if w, ok := b.Cited[k]; !ok || v != w {
			return fmt.Errorf("cited %q: %+v vs %+v", k, a, b)
		}
	}
	return nil
}

// checkStateCodec is the property FuzzStateCodec checks: whatever the
// fast decoders accept, encoding/json reads the same; whatever
// encoding/json reads, the encoders write as it does.
func checkStateCodec(t *testing.T, data []byte) {
	var jw witness
	jerr := json.Unmarshal(data, &jw)
	if fw, ok := fastWitness(data); ok {
		if jerr != nil {
			t.Fatalf("witness %q: fast path took what encoding/json refuses (%v)", data, jerr)
		}
		if err := sameWitness(fw, jw); err != nil {
			t.Fatalf("witness %q: %v", data, err)
		}
	}
	if w, err := decodeWitness(data); (err == nil) != (jerr == nil) || err == nil && sameWitness(w, jw) != nil {
		t.Fatalf("decodeWitness(%q) = %+v, %v; encoding/json: %+v, %v", data, w, err, jw, jerr)
	}
	if jerr == nil {
		want, werr := json.Marshal(jw)
		got, gerr := encodeWitness(jw)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("encodeWitness of %q:\n got %s (%v)\nwant %s (%v)", data, got, gerr, want, werr)
		}
		if gerr == nil {
			var again witness
			json.Unmarshal(got, &again)
			if back, err := decodeWitness(got); err != nil || sameWitness(back, again) != nil {
				t.Fatalf("%s does not read back: %+v %v", got, back, err)
			}
			if _, ok := fastWitness(got); !ok && !bytes.Contains(got, []byte(`\`)) {
				t.Fatalf("the fast path refuses its own %s", got)
			}
		}
	}
	var jh feedHint
	jerr = json.Unmarshal(data, &jh)
	if fh, ok := fastHint(data); ok {
		if jerr != nil {
			t.Fatalf("hint %q: fast path took what encoding/json refuses (%v)", data, jerr)
		}
		if err := sameHint(fh, jh); err != nil {
			t.Fatalf("hint %q: %v", data, err)
		}
	}
	if h, err := decodeHint(data); (err == nil) != (jerr == nil) || err == nil && sameHint(h, jh) != nil {
		t.Fatalf("decodeHint(%q) = %+v, %v; encoding/json: %+v, %v", data, h, err, jh, jerr)
	}
	if jerr == nil {
		want, _ := json.Marshal(jh)
		got := encodeHint(jh)
		if !bytes.Equal(got, want) {
			t.Fatalf("encodeHint of %q:\n got %s\nwant %s", data, got, want)
		}
		var again feedHint
		json.Unmarshal(got, &again)
		if back, err := decodeHint(got); err != nil || sameHint(back, again) != nil {
			t.Fatalf("%s does not read back: %+v %v", got, back, err)
		}
		if _, ok := fastHint(got); !ok && !bytes.Contains(got, []byte(`\`)) {
			t.Fatalf("the fast path refuses its own %s", got)
		}
	}
}

var stateCodecSeeds = []string{
	`{"feeds":{"live":{"ella@box":{"seq":5,"hash":"QlTQn53sG_HMfwmQq0nfur1qzUVpwb2vMCpPBU8sLlo","time":"2026-11-29T15:00:14Z"},"lyra@box":{"seq":5,"hash":"XI0F2OBMGKS-IxWgq13SKmNnMHJTzRm5CBFXAO5DNdw","time":"2026-11-29T15:00:13Z"}}},"files":{"log/live/2026-11/ella@box.md":{"offset":1404,"anchor":"bcd80faa27e3551a1f9633031e9cf1dc","writer":"ella@box","seq":5,"hash":"QlTQn53sG_HMfwmQq0nfur1qzUVpwb2vMCpPBU8sLlo"},"log/live/2026-11/notes.md":{"offset":0,"anchor":""}}}`,
	`{"file":"log/live/2026-11/lyra@box.md","offset":1370,"anchor":"50dd07e3c04f4e0a95ce54364d09343e","seq":5,"hash":"XI0F2OBMGKS-IxWgq13SKmNnMHJTzRm5CBFXAO5DNdw","cited":{"ella@box":4,"mallory@box":4}}`,
	`{}`, `{"feeds":null,"files":null}`, `{"feeds":{"live":null}}`, `{"feeds":{},"files":{}}`,
	`{"feeds":{"live":{"a":{"seq":1}}},"feeds":{"live":{"b":{"seq":2}}}}`, // repeated keys
	`{"feeds":{"live":{"a":{"seq":1},"a":{"hash":"x"}}}}`,
	`{"files":{"x":{"seq":1,"seq":2}}}`,
	`{"SEQ":3,"Hash":"h","file":"f"}`, // encoding/json matches keys in any case
	`{ "seq" : 3 }`, `{"seq":3.0}`, `{"seq":1e3}`, `{"seq":-0}`, `{"seq":007}`, `{"seq":9223372036854775808}`, `{"seq":-9223372036854775808}`,
	`{"file":"log/live/2026-11/로그 \"q\".md","hash":"\u003c\u0026\u003e"}`, `{"file":"a<b&c>d"}`, "{\"file\":\"\xff\"}", "{\"file\":\"\u2028\"}",
	`{"feeds":{"live":{"w":{"seq":1,"hash":"h","time":"2026-11-29T15:00:13.5+09:00"}}}}`,
	`{"feeds":{"live":{"w":{"time":""}}}}`, `{"feeds":{"live":{"w":{"time":"2026-13-01T00:00:00Z"}}}}`,
	`{"cited":{}}`, `{"cited":{"a":1,"a":2}}`, `{"unknown":1}`, `{"seq":1}x`, `{"seq":1`, `[]`, `null`, ``,
}

func TestStateCodec(t *testing.T) {
	for _, s := range stateCodecSeeds {
		checkStateCodec(t, []byte(s))
	}
	// A witness as appends leave it: the fast path reads it, and writes
	// it back byte for byte.
	v := mustVault(t)
	l := mustLog(t, v)
	for i := range 3 {
		for _, a := range appenders {
			mustAppend(t, l, a, fmt.Sprint("e", i))
		}
	}
	for _, rel := range []string{witnessFile, hintPath(streamLive, "lyra@"+testDevice)} {
		doc, err := readStateDoc(l.abs(rel))
		if err != nil {
			t.Fatal(err)
		}
		checkStateCodec(t, doc)
		_, okW := fastWitness(doc)
		_, okH := fastHint(doc)
		if !okW && !okH {
			t.Fatalf("%s: the fast path refuses what the encoder wrote: %s", rel, doc)
		}
	}
}

// TestStateCodecFormat: state files as the codec writes them (these texts
// are its output, and encoding/json's) read as they should and are written
// again byte for byte.
func TestStateCodecFormat(t *testing.T) {
	for _, tc := range []struct {
		doc     string
		witness bool
	}{
		{stateCodecSeeds[0], true},
		{stateCodecSeeds[1], false},
		{`{"feeds":{"decisions":{"lyra@box":{"seq":2,"hash":"h"}},"live":{}},"files":{}}`, true},
		{`{"file":"log/decisions/lyra@box.md","offset":0,"anchor":"","seq":0,"hash":""}`, false},
		{`{"file":"log/live/2026-11/\u003cx\u003e.md","offset":7,"anchor":"a","seq":1,"hash":"h","cited":{"로그@box":3}}`, false},
	} {
		var got []byte
		if tc.witness {
			w, err := decodeWitness([]byte(tc.doc))
			if err != nil {
				t.Fatalf("%s: %v", tc.doc, err)
			}
			got = must(encodeWitness(w))
		} else {
			h, err := decodeHint([]byte(tc.doc))
			if err != nil {
				t.Fatalf("%s: %v", tc.doc, err)
			}
			got = encodeHint(h)
		}
		if string(got) != tc.doc {
			t.Errorf("written back:\n got %s\nwant %s", got, tc.doc)
		}
	}
	h, err := decodeHint([]byte(stateCodecSeeds[1]))
	if err != nil || h.File != "log/live/2026-11/lyra@box.md" || h.Offset != 1370 || h.Seq != 5 || h.Cited["ella@box"] != 4 || h.Cited["mallory@box"] != 4 {
		t.Fatalf("hint read as %+v, %v", h, err)
	}
	w, err := decodeWitness([]byte(stateCodecSeeds[0]))
	if s := w.get(streamLive, "ella@box"); err != nil || s.Seq != 5 || !s.Time.Equal(time.Date(2026, 11, 29, 15, 0, 14, 0, time.UTC)) || w.Files["log/live/2026-11/ella@box.md"].Offset != 1404 {
		t.Fatalf("witness read as %+v, %v", w, err)
	}
}

func FuzzStateCodec(f *testing.F) {
	for _, s := range stateCodecSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkStateCodec)
}

// BenchmarkWitnessCodec compares the witness codec with encoding/json on
// the witness of 3 writers' feeds (the append benchmarks' shape).
func BenchmarkWitnessCodec(b *testing.B) {
	doc := []byte(stateCodecSeeds[0])
	var w witness
	if err := json.Unmarshal(doc, &w); err != nil {
		b.Fatal(err)
	}
	b.Run("decode/json", func(b *testing.B) {
		for b.Loop() {
			var w witness
			json.Unmarshal(doc, &w)
		}
	})
	b.Run("decode/own", func(b *testing.B) {
		for b.Loop() {
			if _, ok := fastWitness(doc); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("encode/json", func(b *testing.B) {
		for b.Loop() {
			json.Marshal(w)
		}
	})
	b.Run("encode/own", func(b *testing.B) {
		for b.Loop() {
			encodeWitness(w)
		}
	})
}
