package index

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestSectionLister(t *testing.T) {
	long := "# Long\n\nintro\n\n## One\n\n" + strings.Repeat("alpha words here. ", 80) + "\n\n## Two\n\n" + strings.Repeat("beta words here. ", 80) + "\n"
	v := mustVault(t, map[string]string{
		"short.md":                     "---\ntitle: Short\n---\n# Short\n\nA few words.\n",
		"long.md":                      long,
		"log/live/2026-12/lyra@box.md": "## 2026-12-01T10:00:00Z lyra [general/note] hello\n\nbody\n",
		"empty.md":                     "---\ntitle: Only frontmatter\n---\n",
	})
	l := NewSectionLister(v)
	secs, err := l.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range secs {
		got = append(got, s.Path+":"+strconv.Itoa(s.Line))
	}
	want := "long.md:1 long.md:5 long.md:9 short.md:4"
	if strings.Join(got, " ") != want {
		t.Fatalf("sections %v, want %s", got, want)
	}
	if secs[3].Text != "Short\nA few words." || !strings.HasPrefix(secs[1].Text, "One\nalpha") {
		t.Fatalf("texts %q %q", secs[3].Text, secs[1].Text)
	}
	// A rename keeps the texts: nothing for the store to embed again.
	if err := os.Rename(filepath.Join(v.Root(), "short.md"), filepath.Join(v.Root(), "renamed.md")); err != nil {
		t.Fatal(err)
	}
	again, err := l.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 4 || again[3].Path != "renamed.md" || again[3].Text != secs[3].Text {
		t.Fatalf("after a rename: %+v", again)
	}
}
