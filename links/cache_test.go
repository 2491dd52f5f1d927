package links

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
)

// uncached is Find the way it was before the cache: every file read.
func uncached(t *testing.T, root, note string) *Result {
	t.Helper()
	v, err := Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	res, err := v.Find(note)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestCacheAnswersAsAFullRead: Find answers from the links cache as a
// read of every file would, on a vault with each kind of link, and after
// each kind of change — a new backlink, one removed, a note deleted, a
// save that keeps the size, a damaged cache.
func TestCacheAnswersAsAFullRead(t *testing.T) {
	root := vault(t, conventions)
	if err := os.MkdirAll(filepath.Join(root, ".nexus", "index"), 0o755); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(root, filepath.FromSlash(CacheFile))
	notes := []string{"People/Ada Lovelace.md", "Notes/Ada Lovelace.md", "Babbage", "Babbage Charles", "Notes/Engine.md", "diagram.png", "Files/Paper.pdf", "Daily/café menu", "Boards/Plan.canvas"}
	check := func(step string) {
		t.Helper()
		for _, n := range notes {
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(n))); err != nil && filepath.Ext(n) != "" {
				continue // deleted in this step
			}
			want := uncached(t, root, n)
			got, err := Find(root, n)
			if err != nil {
				t.Fatalf("%s: Find(%q): %v", step, n, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: Find(%q) from the cache =\n%+v\nreading every file:\n%+v", step, n, got, want)
			}
		}
		if _, err := os.Stat(cache); err != nil {
			t.Fatalf("%s: no cache written: %v", step, err)
		}
	}
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check("first run")
	check("from the cache")

	write("New/Mention.md", "Now [[Babbage]] and [x](../People/Ada%20Lovelace.md).\n")
	check("a new note linking")

	write("Babbage Charles.md", "# Charles Babbage\nsee nothing\n")
	check("a backlink removed")

	if err := os.Remove(filepath.Join(root, "Notes", "Engine.md")); err != nil {
		t.Fatal(err)
	}
	check("a linking note deleted")

	// Same size, mtime set back: the change time still tells.
	p := filepath.Join(root, "New", "Mention.md")
	st, _ := os.Stat(p)
	write("New/Mention.md", "Now [[Babbagf]] and [x](../People/Ada%20Lovelace.md).\n")
	if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	check("a save that keeps size and mtime")

	for _, damaged := range []string{"", "nexus-links 1\nnot numbers\tx\ty\tz\n", "nexus-links 1\n1\t2\t3\t\"unterminated\n", "other header\n"} {
		if err := os.WriteFile(cache, []byte(damaged), 0o644); err != nil {
			t.Fatal(err)
		}
		check("a damaged cache " + damaged)
	}
}

// TestCacheReadsOnlyWhatChanged: with the cache current, Find reads the
// note and the files whose links name it, no other; a changed file is
// read once more.
func TestCacheReadsOnlyWhatChanged(t *testing.T) {
	root := vault(t, map[string]string{
		"A.md":     "links [[B]]\n",
		"B.md":     "# B\n",
		"Other.md": "links [[C]] and [[b.md.md]]\n",
		"C.md":     "# C\n",
		"D.md":     "[[People/../B|via a folder]]\n",
	})
	if err := os.MkdirAll(filepath.Join(root, ".nexus", "index"), 0o755); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var read []string
	defer func(f func(string) ([]byte, error)) { readFile = f }(readFile)
	readFile = func(p string) ([]byte, error) {
		mu.Lock()
		rel, _ := filepath.Rel(root, p)
		read = append(read, filepath.ToSlash(rel))
		mu.Unlock()
		return os.ReadFile(p)
	}
	for _, tc := range []struct {
		step, note string
		change     func()
		want       []string
	}{
		{"first run", "B", nil, []string{"A.md", "B.md", "C.md", "D.md", "Other.md"}},
		{"from the cache", "B", nil, []string{"A.md", "B.md", "D.md"}},
		{"another note", "C", nil, []string{"C.md", "Other.md"}},
		{"a changed file", "C", func() { os.WriteFile(filepath.Join(root, "A.md"), []byte("now [[C]] too\n"), 0o644) }, []string{"A.md", "C.md", "Other.md"}},
		{"after the change", "B", nil, []string{"B.md", "D.md"}},
	} {
		if tc.change != nil {
			tc.change()
		}
		read = nil
		res, err := Find(root, tc.note)
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(read)
		read = slices.Compact(read)
		if !reflect.DeepEqual(read, tc.want) {
			t.Errorf("%s: Find(%q) read %q, want %q", tc.step, tc.note, read, tc.want)
		}
		if want := uncached(t, root, tc.note); !reflect.DeepEqual(res, want) {
			t.Errorf("%s: Find(%q) = %+v, want %+v", tc.step, tc.note, res, want)
		}
	}
}
