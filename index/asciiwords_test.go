package index

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	unicodetok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"

	"github.com/nexus-memory/nexus/index/indextest"
)

// tokenDump is every token of ts, with its offsets, position and type.
func tokenDump(ts analysis.TokenStream) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "%q %d:%d p%d t%d k%v\n", t.Term, t.Start, t.End, t.Position, t.Type, t.KeyWord)
	}
	return b.String()
}

// checkWords fails t when words differs from bleve's tokenizer on in.
func checkWords(t *testing.T, in []byte) {
	t.Helper()
	tok := unicodetok.NewUnicodeTokenizer()
	ts, ascii := words(tok, in)
	if got, want := tokenDump(ts), tokenDump(tok.Tokenize(in)); got != want {
		t.Fatalf("words(%q):\n%s\nbleve's tokenizer:\n%s", in, got, want)
	}
	if want := isASCII(string(in)); ascii != want {
		t.Fatalf("words(%q) says ASCII only: %v", in, ascii)
	}
}

func TestWords(t *testing.T) {
	for _, in := range []string{
		// ASCII only
		"", " ", "\x00", "\x7f", "a", "_", "__", "_1", "1_", "a_", "a_b", "abc123", "123abc",
		"a.b", "a:b", "a'b", "a,b", "a;b", "1:2", "1,2", "1;2", "1'2", "1.2", "a.1", "1.a",
		"a..b", "a.", ".a", "3.14.15", "1.2.a", "a.b.1", "1a.b", "a1.2", "a1:b", "a_.b", "1_,2",
		"U.S.A.", "can't", "e.g.", "x\r\ny", "a\x00b", "a-b", "rock'n'roll", "1,000,000.5",
		"See [[Two were the]] #people `with on` https://example.com/a_b?c=1&d=2.",
		"Contract to the green were to their files.\nFor blocked have #tag/nested x:y 10:30",
		// mixed scripts
		"배포 끝냈다 deploy 했다", "API를 사용 to the 서버", "café au lait", "it’s done",
		"a \u0301b", "a \u200dx", "x \u200b y", "1 ２ 3", "🇰🇷 flag 🇰🇷🇰", "카타카나 中文 text",
		"word\u00a0word", "a\u3000b", "a.\u0301b", "ab\u0301 cd", "\u0301", " \u0301 ",
	} {
		t.Run(fmt.Sprintf("%q", in), func(t *testing.T) { checkWords(t, []byte(in)) })
	}
}

// TestWordsRandom compares words with bleve's tokenizer on random text
// weighted towards what the rules are about: ASCII punctuation between
// letters and digits, white space, and non-ASCII text that joins or
// follows it (Hangul, marks, joiners, flags, wide forms).
func TestWordsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "Z", "9", "_", ".", ":", "'", ",", ";", " ", "\n", "\t", "\r", "-", "\x00",
		"가", "나다", "é", "\u0301", "\u200d", "\u200b", "\u00a0", "’", "🇰", "👍", "カ", "中", "\u3000", "Ａ", "١", "\xff", "\xe1\x84"}
	for range 20000 {
		var b []byte
		for range r.IntN(30) {
			if r.IntN(4) == 0 {
				b = append(b, byte(r.IntN(128)))
			} else {
				b = append(b, pieces[r.IntN(len(pieces))]...)
			}
		}
		checkWords(t, b)
	}
}

// FuzzWords holds words to bleve's Unicode tokenizer on any text.
func FuzzWords(f *testing.F) {
	for _, s := range []string{"can't stop", "3.14, 1,000; a:b", "a_b 1_2 _", "x.y.1 1.2.z", "배포 끝냈다 deploy", "a \u0301b"} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkWords)
}

// benchVaultText is the text of the notes of a generated 300-note vault
// (English with Korean sentences among it), end to end.
func benchVaultText(b *testing.B) []byte {
	dir := b.TempDir()
	if _, err := indextest.Generate(dir, indextest.Options{Notes: 300, Seed: 5}); err != nil {
		b.Fatal(err)
	}
	var text []byte
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".md") {
			data, err := os.ReadFile(path)
			text = append(text, data...)
			return err
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return text
}

// BenchmarkWords compares words with bleve's tokenizer on the generated
// vault's notes (English with Korean sentences among it), and with the
// index's whole tokenizer.
func BenchmarkWords(b *testing.B) {
	text := benchVaultText(b)
	paragraphs := bytes.Split(text, []byte("\n\n"))
	tok := unicodetok.NewUnicodeTokenizer()
	for _, bc := range []struct {
		name string
		f    func([]byte) analysis.TokenStream
	}{
		{"bleve", tok.Tokenize},
		{"words", func(in []byte) analysis.TokenStream { ts, _ := words(tok, in); return ts }},
		// The index's tokenizer: words, the Hangul bigrams across
		// spaces, and the check that the text needs no folding.
		{"cross", crossTokenizer{tok}.Tokenize},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				for _, p := range paragraphs {
					bc.f(p)
				}
			}
		})
	}
}
