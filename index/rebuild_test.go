package index

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/document"
	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/index/indextest"
	"github.com/nexus-memory/nexus/vault"
)

// termSet is every term of every field of the index with the documents
// holding it, each with its frequency, norm and term vectors (positions
// and offsets): with docSet, the index's whole content.
func termSet(t *testing.T, ix *Index) []string {
	t.Helper()
	bi, _ := ix.local()
	adv, err := bi.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	r, err := adv.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fields, err := bi.Fields()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(fields)
	ctx := context.Background()
	var out []string
	for _, f := range fields {
		d, err := r.FieldDict(f)
		if err != nil {
			t.Fatal(err)
		}
		var terms []string
		for {
			e, err := d.Next()
			if err != nil {
				t.Fatal(err)
			}
			if e == nil {
				break
			}
			terms = append(terms, e.Term)
		}
		d.Close()
		for _, term := range terms {
			tr, err := r.TermFieldReader(ctx, []byte(term), f, true, true, true)
			if err != nil {
				t.Fatal(err)
			}
			var postings []string
			for {
				p, err := tr.Next(nil)
				if err != nil {
					t.Fatal(err)
				}
				if p == nil {
					break
				}
				id, err := r.ExternalID(p.ID)
				if err != nil {
					t.Fatal(err)
				}
				line := fmt.Sprintf("%s f%d n%g", id, p.Freq, p.Norm)
				for _, v := range p.Vectors {
					line += fmt.Sprintf(" %d@%d-%d%v", v.Pos, v.Start, v.End, v.ArrayPositions)
				}
				postings = append(postings, line)
			}
			tr.Close()
			sort.Strings(postings)
			out = append(out, fmt.Sprintf("%s:%q %s", f, term, strings.Join(postings, "; ")))
		}
	}
	return out
}

// queryScores runs queries and lists every hit with its score (rounded:
// the last digits depend on the order of float sums), sorted by score and
// then by hit, so that the order of hits of equal score (that of the
// documents inside the index) does not count.
func queryScores(t *testing.T, ix *Index, queries []string) []string {
	t.Helper()
	var out []string
	for _, q := range queries {
		res := mustSearch(t, ix, Query{Text: q, Limit: 10000, NoSnippets: true})
		hits := make([]string, 0, len(res.Hits))
		for _, h := range res.Hits {
			hits = append(hits, fmt.Sprintf("%s → %.6g %s:%d", q, h.Score, h.Path, h.Line))
		}
		sort.Strings(hits)
		out = append(out, hits...)
	}
	return out
}

// snippets are the snippets of the first hits of queries, by hit.
func snippets(t *testing.T, ix *Index, queries []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, q := range queries {
		for _, h := range mustSearch(t, ix, Query{Text: q}).Hits {
			out[fmt.Sprintf("%s → %s:%d", q, h.Path, h.Line)] = h.Snippet
		}
	}
	return out
}

// rebuildVault generates a vault of every kind of note the index knows
// (needles, Korean, big split notes, log feeds, properties, frontmatter-
// only notes, emoji tags).
func rebuildVault(t *testing.T) (*vault.Vault, *indextest.Vault) {
	t.Helper()
	dir := t.TempDir()
	gv, err := indextest.Generate(dir, indextest.Options{Notes: 400, Seed: 11, Needles: true, Conventions: true, Big: 2})
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := vault.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	return v, gv
}

func rebuildQueries(gv *indextest.Vault) []string {
	qs := []string{"deploy", "backup restore error", "staging ssh port", "배포", "시간 초과", `"restore error"`, "prop:author:Ada", "tag:🌲"}
	for _, n := range gv.Needles {
		qs = append(qs, n.Query)
	}
	for _, p := range gv.Planted {
		qs = append(qs, p.Query)
	}
	return qs
}

func equalLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("%s differ at %d of %d/%d:\n built:       %s\n incremental: %s", what, i, len(got), len(want), got[i], want[i])
		}
	}
	t.Fatalf("%s differ: %d lines built, %d incremental", what, len(got), len(want))
}

// TestRebuildMatchesIncremental: a rebuild's index holds exactly what
// indexing the same files in batches holds, and answers the same.
func TestRebuildMatchesIncremental(t *testing.T) {
	v, gv := rebuildVault(t)
	ctx := context.Background()
	// A small budget: many batches, so many segments for both (21 in a
	// rebuild), and merges of at most four: three levels of merges.
	ix := mustOpen(t, v, Options{MemoryBudget: 1})
	defer func(n int) { maxMergeFanIn = n }(maxMergeFanIn)
	maxMergeFanIn = 4
	// The reference is bleve's own analysis of every field.
	bleveAnalyses = true
	err := ix.Sync(ctx)
	bleveAnalyses = false
	if err != nil {
		t.Fatal(err)
	}
	qs := rebuildQueries(gv)
	wantDocs, wantTerms, wantScores, wantSnippets := docSet(t, ix), termSet(t, ix), queryScores(t, ix, qs), snippets(t, ix, qs)
	if len(wantDocs) < 400 || len(wantScores) < len(qs) {
		t.Fatalf("vault too small to compare: %d docs, %d hits", len(wantDocs), len(wantScores))
	}
	var reports []Progress
	if err := ix.Rebuild(ctx, func(p Progress) { reports = append(reports, p) }); err != nil {
		t.Fatal(err)
	}
	// Counted up to every file, then the merge, then complete.
	n := len(reports)
	if n < 3 {
		t.Fatalf("progress %+v: want counting, merging, complete", reports)
	}
	if last, merge := reports[n-1], reports[n-2]; last.Total != len(gv.Paths) || last.Done != last.Total || last.Merging ||
		!merge.Merging || merge.Done != merge.Total || merge.Total != last.Total {
		t.Errorf("last two progress reports %+v, %+v: want the merge of %d files, then complete", merge, last, len(gv.Paths))
	}
	for i, p := range reports[:n-2] {
		if p.Merging || p.Done >= p.Total || (i > 0 && p.Done < reports[i-1].Done) {
			t.Errorf("progress report %d of %d is %+v: before the merge, counting up and short of the total", i, n, p)
		}
	}
	equalLines(t, "documents", docSet(t, ix), wantDocs)
	equalLines(t, "terms", termSet(t, ix), wantTerms)
	// No empty term (a note without an agent, a type or a path of its
	// own on disk), and nothing of the fields only shown with a hit.
	for _, line := range wantTerms {
		field, term, _ := strings.Cut(line, ":")
		if strings.HasPrefix(term, `"" `) || field == "heading" || field == "disk" || field == "kind" {
			t.Errorf("indexed: %.80s", line)
		}
	}
	equalLines(t, "hits", queryScores(t, ix, qs), wantScores)
	both := 0
	for hit, snip := range snippets(t, ix, qs) {
		if want, ok := wantSnippets[hit]; ok {
			both++
			if snip != want {
				t.Errorf("snippet of %s:\n built:       %q\n incremental: %q", hit, snip, want)
			}
		}
	}
	if both < len(qs) {
		t.Errorf("only %d snippets to compare", both)
	}
	// The mapping stored in the index is the one a new index gets.
	bi, _ := ix.local()
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(bi.Mapping())
	b, _ := json.Marshal(m)
	if !bytes.Equal(a, b) {
		t.Fatalf("stored mapping differs:\n%s\n%s", a, b)
	}
	// And it stays a normal index: reopened, changed incrementally.
	ix.Close()
	ix = mustOpen(t, v, Options{})
	writeFile(t, v, "notes/zz-new.md", "# Quagga\n\nquagga sighting\n")
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := paths(mustSearch(t, ix, Query{Text: "quagga"})); len(got) != 1 || got[0] != "notes/zz-new.md" {
		t.Fatalf("after the rebuild, a new note: %v", got)
	}
	assertNoLeftovers(t, v)
}

func assertNoLeftovers(t *testing.T, v *vault.Vault) {
	t.Helper()
	dir := filepath.Join(v.Root(), filepath.FromSlash(vault.IndexDir))
	for _, name := range []string{newSubdir, oldSubdir, newManifestFile} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s left behind", name)
		}
	}
}

// TestRebuildKillHelper is the process TestRebuildKilled kills: it
// rebuilds the index and exits at the step it is told.
func TestRebuildKillHelper(t *testing.T) {
	dir, at := os.Getenv("NEXUS_REBUILD_VAULT"), os.Getenv("NEXUS_REBUILD_KILL_AT")
	if dir == "" {
		t.Skip("helper process only")
	}
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Open(v, Options{MemoryBudget: 1, NoServe: true})
	if err != nil {
		t.Fatal(err)
	}
	rebuildStep = func(s string) {
		if s == at {
			os.Exit(3) // no deferred clean-up, as if killed
		}
	}
	if err := ix.Rebuild(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("step %q never came", at)
}

// TestRebuildKilled: a rebuild killed at any step leaves an index that
// opens, agrees with its manifest, and after a sync holds exactly what a
// clean rebuild holds.
func TestRebuildKilled(t *testing.T) {
	steps := []string{"building", "merging", "built", "manifest written", "old index moved", "new index moved", "manifest moved"}
	for _, at := range steps {
		t.Run(strings.ReplaceAll(at, " ", "_"), func(t *testing.T) {
			v := mustVault(t, nil)
			if _, err := indextest.Generate(v.Root(), indextest.Options{Notes: 40, Seed: 5, Big: 1}); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			ix := mustOpen(t, v, Options{NoServe: true})
			if err := ix.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			ix.Close()
			// Changes the rebuild sees and the old index does not.
			writeFile(t, v, "notes/zz-added.md", "# Okapi\n\nokapi tracks\n")
			if err := os.Remove(filepath.Join(v.Root(), v0(t, v))); err != nil {
				t.Fatal(err)
			}

			cmd := exec.Command(os.Args[0], "-test.run=^TestRebuildKillHelper$")
			cmd.Env = append(os.Environ(), "NEXUS_REBUILD_VAULT="+v.Root(), "NEXUS_REBUILD_KILL_AT="+at)
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
				t.Fatalf("helper did not stop at %q: %v\n%s", at, err, out)
			}

			ix = mustOpen(t, v, Options{NoServe: true})
			// Before any sync: the index holds exactly the files its
			// manifest names.
			ix.mu.Lock()
			man := ix.files()
			ix.mu.Unlock()
			inIndex := map[string]bool{}
			for _, line := range docSet(t, ix) {
				inIndex[line[:strings.Index(line, "#")]] = true
			}
			for k := range man {
				if !inIndex[k] && !strings.HasPrefix(k, "log/") {
					t.Errorf("manifest names %s, the index has no document of it", k)
				}
			}
			for k := range inIndex {
				if _, ok := man[k]; !ok {
					t.Errorf("the index has %s, the manifest does not", k)
				}
			}
			_, added := man["notes/zz-added.md"]
			if swapped := slices.Index(steps, at) >= slices.Index(steps, "manifest written"); added != swapped {
				t.Errorf("new index in place: %v, want %v", added, swapped)
			}
			assertNoLeftovers(t, v)
			if err := ix.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			got := docSet(t, ix)
			if err := ix.Rebuild(ctx, nil); err != nil {
				t.Fatal(err)
			}
			equalLines(t, "documents after the sync", got, docSet(t, ix))
		})
	}
}

// v0 is a note of the vault to delete.
func v0(t *testing.T, v *vault.Vault) string {
	t.Helper()
	var found string
	filepath.WalkDir(filepath.Join(v.Root(), "notes"), func(p string, d os.DirEntry, err error) error {
		if err == nil && found == "" && !d.IsDir() && strings.HasSuffix(p, ".md") {
			found, _ = filepath.Rel(v.Root(), p)
		}
		return nil
	})
	if found == "" {
		t.Fatal("no note to delete")
	}
	return found
}

// allFreqs analyses d's "all" field both ways: as analyseFields does
// (from its parts' tokens) and as bleve does (its whole text again).
func allFreqs(t *testing.T, src *doc) (shared, direct string, ok bool) {
	t.Helper()
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	dump := func(d *document.Document) string {
		var lines []string
		for _, f := range d.Fields {
			if !f.Options().IsIndexed() {
				continue
			}
			var terms []string
			for term, tf := range f.AnalyzedTokenFrequencies() {
				line := fmt.Sprintf("%q×%d", term, tf.Frequency())
				for _, l := range tf.Locations {
					line += fmt.Sprintf(" %d@%d-%d", l.Position, l.Start, l.End)
				}
				terms = append(terms, line)
			}
			sort.Strings(terms)
			lines = append(lines, fmt.Sprintf("%s len=%d %s", f.Name(), f.AnalyzedLength(), strings.Join(terms, ", ")))
		}
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	}
	a := document.NewDocument("a")
	if err := m.MapDocument(a, src); err != nil {
		t.Fatal(err)
	}
	analyseFields(m, src, a)
	for _, f := range a.Fields {
		if f.Name() == "all" {
			_, ok = f.(*precomputed)
		}
	}
	b := document.NewDocument("b")
	if err := m.MapDocument(b, src); err != nil {
		t.Fatal(err)
	}
	for _, f := range b.Fields {
		if f.Options().IsIndexed() {
			f.Analyze()
		}
	}
	return dump(a), dump(b), ok
}

func allDoc(title, aliases, tags, props, headings, body string) *doc {
	d := &doc{Path: "n.md", Title: title, Aliases: aliases, TagText: tags, Props: props, Headings: headings, Body: body, Kind: KindNote}
	d.All = strings.Join([]string{title, aliases, tags, props, headings, body}, "\n")
	return d
}

// longDoc is allDoc with the body in longbody, as buildDocs puts one
// too long for word pairs.
func longDoc(title, aliases, tags, props, headings, body string) *doc {
	d := allDoc(title, aliases, tags, props, headings, body)
	d.Body, d.LongBody = "", body
	return d
}

// TestAllFieldFromParts: the "all" field made from its parts' tokens has
// exactly the terms, frequencies and length of analysing its text, where
// the parts meet in every script; every other field is as bleve makes it.
func TestAllFieldFromParts(t *testing.T) {
	cases := []*doc{
		allDoc("Deploy notes", "", "", "", "", "the backup restore error"),
		allDoc("배포 시간", "별칭", "운영", "author Ada", "시간 초과", "초과 배포를 했다 시간 초과"),
		allDoc("東京の天気", "とうきょう", "旅行", "", "天気", "京都 大阪 東京タワー"),
		allDoc("ｶﾀｶﾅ", "ﾃｽﾄ", "", "", "", "ﾞ combining at the start"),
		allDoc("Ada's book", "Lovelace's", "📚 🌲", "author [[Ada Lovelace]]", "Chapter one", "Ada's notes: it's the engine's"),
		allDoc("", "", "", "", "", ""),
		allDoc("title only", "", "", "", "", ""),
		allDoc("a\u0301 NFD", "x", "y", "z", "w", "e\u0301t\u00e9 \u200dzwj \ufeffbom"),
		allDoc("ends with space ", " starts with space", "\ttab", "", "", "  body  "),
		{Path: "f.md", Title: "Front 배포", Aliases: "matter", TagText: "only", Props: "key 값", All: "Front 배포\nmatter\nonly\nkey 값", Kind: KindNote},
		{Path: "x.md", Title: "Not joined", Body: "body", All: "something else entirely", Kind: KindNote},
		// Stop words leave gaps that the word pairs fill with an empty
		// term, also at the start and at the end.
		allDoc("the of", "a", "", "", "", "of the backup and the restore of a an the"),
		allDoc("Ｆｕｌｌ ｗｉｄｔｈ", "ＡＢＣ", "", "", "ﾃｽﾄ", "ＡＢＣ abc ｱｲｳ running runs ran ＲＵＮＮＩＮＧ"),
		allDoc("Running", "runner", "runs", "ran", "running", "running Running RUNNING runs runs ran 달리기 달리기를 running"),
		longDoc("Pasted log", "", "", "", "", "of the backup and the restore of a an the 배포 시간 초과 東京タワー l'équipe"),
		longDoc("", "", "", "", "", ""),
		// Cut into pieces (see nextCut) where the pieces are small:
		// lines, spaces between ASCII, and none between Hangul words.
		longDoc("Log", "", "", "", "", "line one of the log\n배포 시간 초과 배포를 했다 시간초과\r\nfoo\tbar ｶﾀｶﾅ ﾃｽﾄ\n\n東京タワー 京都 大阪 l'équipe O\u2019Brien de\u00adploy\n\u0301 mark after a newline"),
		longDoc("One line", "", "", "", "", strings.Repeat("alpha beta, gamma 배포 시간 the of ", 40)),
	}
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	if getTextAnalysis(m.AnalyzerNamed(analyzerName), m.AnalyzerNamed(bodyAnalyzerName)) == nil {
		t.Fatal("the rebuild's own text analysis does not stand in for the mapping's analyzers")
	}
	defer func(c int) { analysisChunk = c }(analysisChunk)
	for _, chunk := range []int{analysisChunk, 16, 1} {
		analysisChunk = chunk
		for i, d := range cases {
			shared, direct, ok := allFreqs(t, d)
			if shared != direct {
				t.Errorf("case %d, pieces of %d bytes: analysed from parts:\n%s\nanalysed whole:\n%s", i, chunk, shared, direct)
			}
			if want := d.All != "something else entirely"; ok != want {
				t.Errorf("case %d: all from its parts: %v, want %v", i, ok, want)
			}
		}
	}
}

// TestNextCut: a long text is cut after a newline, else at a space
// between ASCII bytes, never inside a word or between Hangul words.
func TestNextCut(t *testing.T) {
	for _, c := range []struct {
		text string
		max  int
		want int
	}{
		{"short", 10, 5},
		{"ab\ncd\nef", 6, 6},
		{"abc def ghi", 6, 4},
		{"배포 시간 초과 end here", 8, 25},
		{"배포 시간 초과", 4, 20},
		{"abcdefgh ij", 3, 9},
		{"ab\tcd", 3, 3},
	} {
		if got := nextCut([]byte(c.text), c.max); got != c.want {
			t.Errorf("nextCut(%q, %d) = %d, want %d", c.text, c.max, got, c.want)
		}
	}
}

func FuzzAllFieldFromParts(f *testing.F) {
	f.Add("배포", "시간", "초과 배포", "東京", "ｶﾀ", "the cat's")
	f.Add("a", "", "", "", "", "b c")
	f.Add("the", "of", "", "", "Ｆｕｌｌ", "the a backup of the the restore ﾃｽﾄ running")
	// Once analysed whole into terms that span two parts: a CJK character
	// NFC makes longer, and a decomposed tag before a half-width kana.
	f.Add("", "", "\ufa6c", "中", "", "")
	f.Add("", "", "\u0958e\u0301\u11a8", "'ｶ", "", "")
	f.Add("de\u00adploy", "O\u2019Brien", "", "ﬁle", "", norm.NFD.String("배포 완료"))
	defer func(c int) { analysisChunk = c }(analysisChunk)
	analysisChunk = 5 // the long body in pieces
	f.Fuzz(func(t *testing.T, title, aliases, tags, props, headings, body string) {
		for _, d := range []*doc{allDoc(title, aliases, tags, props, headings, body), longDoc(title, aliases, tags, props, headings, body)} {
			shared, direct, _ := allFreqs(t, d)
			if shared != direct {
				t.Fatalf("analysed from parts (long %v):\n%s\nanalysed whole:\n%s", d.LongBody != "", shared, direct)
			}
		}
	})
}

// TestRebuildWriteFails: a segment that cannot be written fails the
// rebuild, which removes what it built and leaves the old index
// answering.
func TestRebuildWriteFails(t *testing.T) {
	v, gv := rebuildVault(t)
	ctx := context.Background()
	ix := mustOpen(t, v, Options{MemoryBudget: 1, NoServe: true})
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	q := Query{Text: gv.Needles[0].Query}
	want := len(mustSearch(t, ix, q).Hits)
	if want == 0 {
		t.Fatalf("%q finds nothing before the rebuild", q.Text)
	}
	defer func() { rebuildStep = nil }()
	rebuildStep = func(s string) {
		if s == "building" {
			// Half the files read: the segments' folder goes, at once
			// (a removal could race a writer's new file). What is
			// written next fails, and so does the merge of what was
			// written before.
			build := filepath.Join(ix.dir, newSubdir, "build")
			if err := os.Rename(build, build+".gone"); err != nil {
				t.Error(err)
			}
		}
	}
	err := ix.Rebuild(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "segment") {
		t.Fatalf("rebuild without its segments' folder: %v, want an error writing or merging a segment", err)
	}
	if _, err := os.Stat(filepath.Join(ix.dir, newSubdir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s after the failed rebuild: %v", newSubdir, err)
	}
	if got := len(mustSearch(t, ix, q).Hits); got != want {
		t.Errorf("%q after the failed rebuild: %d hits, want %d", q.Text, got, want)
	}
}
