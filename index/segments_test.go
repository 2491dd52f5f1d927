package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
)

func TestFanIn(t *testing.T) {
	defer func(n int) { maxMergeFanIn = n }(maxMergeFanIn)
	for _, c := range []struct{ max, n, want int }{
		{40, 1, 1},
		{40, 40, 40},
		{40, 41, 7},    // two levels: six merges of 6 or 7, then one of 6
		{40, 106, 11},  // 10k notes
		{40, 1055, 33}, // 100k notes: two levels
		{40, 1600, 40}, // the most two levels take
		{40, 1601, 12}, // three levels
		{4, 21, 3},     // TestRebuildMatchesIncremental
		{4, 7, 3},
		{4, 3, 3},
	} {
		maxMergeFanIn = c.max
		if got := fanIn(c.n); got != c.want {
			t.Errorf("fanIn(%d) with at most %d = %d, want %d", c.n, c.max, got, c.want)
		}
	}
}

// TestRebuildEmptyVault: a rebuild of a vault without a note makes an
// empty index that answers.
func TestRebuildEmptyVault(t *testing.T) {
	v := mustVault(t, nil)
	ix := mustOpen(t, v, Options{NoServe: true})
	if err := ix.Rebuild(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if res := mustSearch(t, ix, Query{Text: "anything"}); len(res.Hits) != 0 {
		t.Errorf("an empty vault: %d hits", len(res.Hits))
	}
}

// TestBleveVersionPinned fails on any change of bleve's version: the
// fast rebuild swaps a file inside bleve's private build folder
// (finishBuild), which a bleve release may lay out differently.
func TestBleveVersionPinned(t *testing.T) {
	data, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var inGoMod string
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == bleveModule {
			inGoMod = f[1]
		} else if len(f) >= 3 && f[0] == "require" && f[1] == bleveModule {
			inGoMod = f[2]
		}
	}
	if inGoMod != bleveBuilderVersion {
		t.Fatalf("go.mod requires bleve %s, but index/segments.go's fast rebuild was written against bleve %s: "+
			"finishBuild swaps a segment file inside the private build folder of bleve's offline builder "+
			"(index/scorch/builder.go). Read that file in bleve %s for changes to how it names its build folder and "+
			"segment files and what Close does with them, fix finishBuild if needed, then set bleveBuilderVersion to %s. "+
			"Until then a binary with bleve %s rebuilds through bleve's public builder (slower).",
			inGoMod, bleveBuilderVersion, inGoMod, inGoMod, inGoMod)
	}
	if v, ok := linkedVersion(bleveModule); ok && v != bleveBuilderVersion {
		t.Fatalf("the test binary links bleve %s, go.mod requires %s", v, inGoMod)
	}
}

// TestBuilderLayout: bleve's offline builder, given one document with a
// batch size of 1, leaves exactly one segment file in its build folder,
// of the format written here, and takes it as its result: what
// finishBuild relies on.
func TestBuilderLayout(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "build")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	w, err := newSegmentWriter(filepath.Join(dir, "index"), filepath.Join(dir, "segments"), preMapped{m})
	if err != nil {
		t.Fatal(err)
	}
	seg, err := w.merge(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := finishBuild(filepath.Join(dir, "index"), tmp, seg, preMapped{m}); err != nil {
		t.Fatalf("bleve %s's offline builder is not laid out as finishBuild expects: %v", bleveBuilderVersion, err)
	}
	ix, err := bleve.Open(filepath.Join(dir, "index"))
	if err != nil {
		t.Fatalf("the index finishBuild made does not open: %v", err)
	}
	defer ix.Close()
	if n, err := ix.DocCount(); err != nil || n != 0 {
		t.Fatalf("an empty segment made an index of %d documents (%v); the placeholder leaked in?", n, err)
	}
}

// TestRebuildThroughPublicBuilder: a binary linked with another bleve,
// or a build folder laid out otherwise, rebuilds through bleve's public
// builder, says so, and answers as the fast rebuild does.
func TestRebuildThroughPublicBuilder(t *testing.T) {
	files := map[string]string{
		"a.md":          "# Alpha\n\nThe quick brown fox jumps over the lazy dog.\n",
		"b.md":          "# Beta\n\nA lazy afternoon; the fox sleeps.\n",
		"notes/c.md":    "---\ntags: [fox]\n---\n# Gamma\n\nNothing about dogs here.\n",
		"notes/d.md":    "# Delta\n\n## Foxes\n\nRed foxes and arctic foxes.\n",
		"projects/e.md": "# Epsilon\n\nquick quick quick\n",
	}
	queries := []string{"fox", "lazy dog", "quick", "gamma", "foxes", "nothing"}
	search := func(t *testing.T, ix *Index) []string {
		var out []string
		for _, q := range queries {
			for _, h := range mustSearch(t, ix, Query{Text: q}).Hits {
				out = append(out, fmt.Sprintf("%s: %s#%s %s", q, h.Path, h.Heading, h.Match))
			}
		}
		return out
	}
	fastIx := mustOpen(t, mustVault(t, files), Options{NoServe: true})
	if err := fastIx.Rebuild(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	want := search(t, fastIx)
	if len(want) == 0 {
		t.Fatal("the fast rebuild finds nothing")
	}

	tests := []struct {
		name     string
		setup    func(t *testing.T)
		warnings string
	}{
		{"another bleve linked", func(t *testing.T) {
			linkedVersion = func(string) (string, bool) { return "v2.99.0", true }
			t.Cleanup(func() { linkedVersion = linkedVersionOf })
		}, "bleve v2.99.0 is linked in"},
		{"build folder laid out otherwise", func(t *testing.T) {
			builderFolder = "no-such-folder*"
			t.Cleanup(func() { builderFolder = "scorch-offline-build*" })
		}, "not laid out as the fast rebuild expects"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup(t)
			ix := mustOpen(t, mustVault(t, files), Options{NoServe: true})
			if err := ix.Rebuild(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			if w := strings.Join(ix.Warnings(), "\n"); !strings.Contains(w, tt.warnings) || !strings.Contains(w, "public builder") {
				t.Errorf("warnings %q do not say %q and that the public builder was used", w, tt.warnings)
			}
			if got := search(t, ix); !slices.Equal(got, want) {
				t.Errorf("through the public builder:\n%s\nthe fast rebuild:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
