package index

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestExcerptRendersAsTheWholeSection: a long section's snippet, taken
// from the excerpt around its best match, is the snippet of the whole
// section rendered, for sections holding every multi-line construct a
// cut could split (fences, comments, math, code spans, key blocks), with
// the match before, inside and after them.
func TestExcerptRendersAsTheWholeSection(t *testing.T) {
	an := queryMapping().AnalyzerNamed(analyzerName)
	pieces := []string{
		"Plain prose about the harbour and its cranes, nothing to find here.",
		"```go\nfunc main() {\n\n\tfmt.Println(\"quokka in code\")\n\n}\n```",
		"~~~\nunclosed? no:\n\n~~~",
		"<!-- a comment\n\nover paragraphs quokka -->",
		"%% hidden\n\nquokka %%",
		"$$\nx^2\n\n+ quokka\n$$",
		"A `code span\n\nacross a blank line` and more.",
		"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQENBF quokka\n-----END PGP PUBLIC KEY BLOCK-----",
		"See [[Kevin Kelly|KK]] and [a link](Some%20Note.md) about **marsupials**.",
		"> [!note] A callout\n> with a quokka inside",
		"# A heading line\nThe quokka lives on Rottnest Island, a marsupial of note.",
		"한국어 문단: 쿼카는 작은 유대류이다. quokka 사진.",
		"Numbers 4\\. and \\[x\\] escaped, ==highlighted quokka== and ~~struck~~.",
	}
	queries := []string{"quokka", "marsupial island", "harbour cranes", "쿼카", "nowhere-to-be-found", "kevin kelly"}
	defer func(n int) { excerptMin = n }(excerptMin)
	narrowed, cases := 0, 0
	for seed := range 15 {
		r := rand.New(rand.NewPCG(uint64(seed), 1))
		var b strings.Builder
		for b.Len() < 60<<10 {
			p := pieces[r.IntN(len(pieces))]
			if r.IntN(3) == 0 {
				p = pieces[0] // mostly prose
			}
			b.WriteString(p)
			b.WriteString([]string{"\n\n", "\n", "\n\n\n"}[r.IntN(3)])
		}
		// The match somewhere in the middle, near a construct or not.
		at := r.IntN(b.Len())
		body := b.String()
		body = body[:at] + " uniqueword " + body[at:]
		data := []byte(body)
		for _, q := range append(queries, "uniqueword") {
			pl, err := buildQuery(validQuery(Query{Text: q}), true)
			if err != nil {
				t.Fatal(err)
			}
			terms := queryTerms(an, pl.p)
			cases++
			h := Hit{Path: "long.md", Title: "Long", Line: 1, EndLine: 0}
			ix := &Index{}
			excerptMin = 1 << 62
			want := ix.snippet(an, terms, h, data)
			excerptMin = 16 << 10
			got := ix.snippet(an, terms, h, data)
			if part, _, _ := excerpt(data, terms); len(part) < len(data)/4 {
				narrowed++
			}
			if got != want {
				t.Errorf("seed %d, query %q: from the excerpt\n%q\nwhole\n%q", seed, q, got, want)
			}
		}
	}
	if narrowed < cases/2 {
		t.Errorf("only %d of %d sections were narrowed to an excerpt", narrowed, cases)
	}
	// The excerpt is bounded: a few kilobytes of a 60 KB section.
	sec := []byte(strings.Repeat(pieces[0]+"\n\n", 1000) + "uniqueword\n\n" + strings.Repeat(pieces[0]+"\n\n", 1000))
	part, cs, ce := excerpt(sec, map[string]bool{"uniqueword": true})
	if len(part) > 4*excerptMargin+1000 || !cs || !ce || !strings.Contains(string(part), "uniqueword") {
		t.Errorf("excerpt of %d bytes: %d bytes (cut before %v, after %v)", len(sec), len(part), cs, ce)
	}
}

// BenchmarkSnippetLongSection is one hit's snippet on a 200 KB section
// without headings (the bench vault's big notes): rendered whole, as
// before excerpts, and from the excerpt around the match.
func BenchmarkSnippetLongSection(b *testing.B) {
	an := queryMapping().AnalyzerNamed(analyzerName)
	para := "The harbour cranes lift containers at dawn; the night shift logs every move in the ledger. "
	var sb strings.Builder
	for sb.Len() < 100<<10 {
		sb.WriteString(para + para + "\n\n")
	}
	sb.WriteString("The backup restore error showed up in the `restore` step.\n\n")
	for sb.Len() < 200<<10 {
		sb.WriteString(para + para + "\n\n")
	}
	data := []byte(sb.String())
	pl, err := buildQuery(validQuery(Query{Text: "backup restore error"}), true)
	if err != nil {
		b.Fatal(err)
	}
	terms := queryTerms(an, pl.p)
	h := Hit{Path: "long.md", Title: "Long", Line: 1}
	defer func(n int) { excerptMin = n }(excerptMin)
	for _, c := range []struct {
		name string
		min  int
	}{{"whole", 1 << 62}, {"excerpt", 16 << 10}} {
		b.Run(c.name, func(b *testing.B) {
			excerptMin = c.min
			ix := &Index{}
			for b.Loop() {
				if s := ix.snippet(an, terms, h, data); !strings.Contains(s, "**backup**") {
					b.Fatalf("snippet %q", s)
				}
			}
		})
	}
}
