package index

import (
	"context"
	"strings"
	"testing"
)

// TestSnippetsFillWhatQuerySnippetsLeft: a search with Query.Snippets
// gives snippets to its first hits only; Snippets fills the others with
// what a search with every snippet shows (hybrid's tests cover a client
// of a holder, which Snippets tells to search instead).
func TestSnippetsFillWhatQuerySnippetsLeft(t *testing.T) {
	long := "# Long\n\nintro\n\n" + strings.Repeat("filler line\n", 40) + "## Far\n\nthe kumquat is at the far end\n"
	v := mustVault(t, map[string]string{
		"a.md":    "# A\n\nkumquat kumquat kumquat\n",
		"b.md":    "# B\n\none kumquat here\n",
		"c.md":    "# C\n\nkumquat jam, and more\n",
		"long.md": long,
	})
	ix := mustOpen(t, v, Options{NoServe: true})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, q := range []Query{{Text: "kumquat"}, {Text: "kumquat far"}, {Text: `"kumquat jam"`}} {
		full := mustSearch(t, ix, q)
		q.Snippets = 1
		part := mustSearch(t, ix, q)
		if len(part.Hits) != len(full.Hits) || len(full.Hits) == 0 {
			t.Fatalf("%q: %d hits with Snippets 1, %d without", q.Text, len(part.Hits), len(full.Hits))
		}
		for i, h := range part.Hits {
			if (h.Snippet != "") != (i == 0) {
				t.Fatalf("%q: hit %d snippet %q with Snippets 1", q.Text, i, h.Snippet)
			}
		}
		local, err := ix.Snippets(context.Background(), q, part.Hits)
		if err != nil || !local {
			t.Fatalf("%q: Snippets: %v, %v", q.Text, local, err)
		}
		for i := range full.Hits {
			if part.Hits[i].Snippet != full.Hits[i].Snippet || part.Hits[i].Line != full.Hits[i].Line {
				t.Fatalf("%q: hit %d filled %q at line %d, a full search shows %q at %d", q.Text, i, part.Hits[i].Snippet, part.Hits[i].Line, full.Hits[i].Snippet, full.Hits[i].Line)
			}
		}
	}
}
