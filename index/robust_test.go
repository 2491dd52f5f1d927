package index

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDamagedSegmentIsRecreated: bleve does not check a segment's bytes
// and panics on damaged ones (a disk error, a sync tool that copied
// .nexus/index half-way). The index is derived state: opening it must
// recreate it, not crash every command that touches it.
func TestDamagedSegmentIsRecreated(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"random bytes near the start", func(b []byte) []byte {
			r := rand.New(rand.NewPCG(1, 2))
			for i := 100; i < min(len(b), 2100); i++ {
				b[i] = byte(r.Uint32())
			}
			return b
		}},
		{"random bytes at the end", func(b []byte) []byte {
			r := rand.New(rand.NewPCG(3, 4))
			for i := max(0, len(b)-200); i < len(b); i++ {
				b[i] = byte(r.Uint32())
			}
			return b
		}},
		{"zeroed", func(b []byte) []byte { clear(b); return b }},
		{"cut in half", func(b []byte) []byte { return b[:len(b)/2] }},
		{"empty", func([]byte) []byte { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := mustVault(t, map[string]string{"a.md": "# A\n\nkumquat orchard\n", "b.md": "# B\n\nfeijoa hedge\n"})
			ctx := context.Background()
			ix := mustOpen(t, v, Options{NoServe: true})
			if err := ix.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			ix.Close()
			segs, _ := filepath.Glob(filepath.Join(v.Root(), ".nexus", "index", bleveSubdir, "store", "*.zap"))
			if len(segs) == 0 {
				t.Fatal("no segment to damage")
			}
			for _, p := range segs {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, tc.damage(b), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ix = mustOpen(t, v, Options{NoServe: true})
			if err := ix.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			for _, w := range []string{"kumquat", "feijoa"} {
				if res := mustSearch(t, ix, Query{Text: w}); len(res.Hits) != 1 {
					t.Errorf("%s after the damage: %v", w, paths(res))
				}
			}
			if err := ix.Rebuild(ctx, nil); err != nil {
				t.Errorf("rebuild: %v", err)
			}
		})
	}
}

// TestFilesWithoutDocumentsAreNoDamage: a vault whose files give no
// document (binary, too big) has an index with none, which is not the
// damage of [TestDamagedSegmentIsRecreated]: opening it again recreates
// nothing and rewrites no manifest.
func TestFilesWithoutDocumentsAreNoDamage(t *testing.T) {
	for _, build := range []string{"sync", "rebuild"} {
		t.Run(build, func(t *testing.T) {
			v := mustVault(t, map[string]string{"bin.md": "a\x00b quokka", "big.md": strings.Repeat("quokka ", 100)})
			ctx := context.Background()
			opts := Options{NoServe: true, MaxFileBytes: 100}
			ix := mustOpen(t, v, opts)
			var err error
			if build == "sync" {
				err = ix.Sync(ctx)
			} else {
				err = ix.Rebuild(ctx, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			ix.Close()
			man := filepath.Join(v.Root(), ".nexus", "index", manifestFile)
			before, err := os.ReadFile(man)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				ix = mustOpen(t, v, opts)
				if res := mustSearch(t, ix, Query{Text: "quokka"}); len(res.Hits) != 0 {
					t.Errorf("quokka: %v", paths(res))
				}
				if w := ix.Warnings(); len(w) > 0 {
					t.Errorf("warnings on opening: %q", w)
				}
				if n := len(ix.FileWarnings()); n != 2 {
					t.Errorf("%d files with warnings, want 2: %v", n, ix.FileWarnings())
				}
				ix.Close()
			}
			if after, _ := os.ReadFile(man); !bytes.Equal(after, before) {
				t.Errorf("manifest rewritten:\n%s\nthen\n%s", before, after)
			}
		})
	}
}

func TestUnpanic(t *testing.T) {
	err := unpanic(func() error { panic("slice bounds out of range") })
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("a panic gives %v", err)
	}
	want := errors.New("plain")
	if err := unpanic(func() error { return want }); err != want {
		t.Fatalf("an error gives %v", err)
	}
	if err := unpanic(func() error { return nil }); err != nil {
		t.Fatalf("nil gives %v", err)
	}
}

// TestNoteReplacedBySymlink: the walk skips symlinks, so a note replaced
// by one (to a file outside the vault, say) is gone from the index, and a
// hit never shows what the link points at.
func TestNoteReplacedBySymlink(t *testing.T) {
	v := mustVault(t, map[string]string{"notes/n2.md": "# Note 2\n\nalpha kumquat\n", "notes/keep.md": "# Keep\n\nkumquat stays\n"})
	outside := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(outside, []byte("# Secret\n\nkumquat TOPSECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ix := mustOpen(t, v, Options{NoServe: true})
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(v.Root(), "notes", "n2.md")
	os.Remove(link)
	if err := os.Symlink(outside, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	// Before the index knows, a hit on the old text must not show the
	// link's target.
	res := mustSearch(t, ix, Query{Text: "alpha"})
	for _, h := range res.Hits {
		if strings.Contains(h.Snippet, "TOPSECRET") {
			t.Fatalf("a hit shows the symlink's target: %+v", h)
		}
	}
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"alpha", "topsecret"} {
		if res := mustSearch(t, ix, Query{Text: q}); len(res.Hits) != 0 {
			t.Errorf("%s after the note became a symlink: %v", q, paths(res))
		}
	}
	if res := mustSearch(t, ix, Query{Text: "kumquat"}); len(res.Hits) != 1 || res.Hits[0].Path != "notes/keep.md" {
		t.Errorf("kumquat: %v", paths(res))
	}
	if st, _ := ix.Status(ctx); st.Pending != 0 {
		t.Errorf("pending %d after the sync", st.Pending)
	}
}

// TestWatchFollowsRenamedFolders: a folder renamed or moved while the
// index watches keeps being watched under its new name, subfolders too,
// and its notes are found at their new paths only.
func TestWatchFollowsRenamedFolders(t *testing.T) {
	v := mustVault(t, map[string]string{
		"deep/d.md":     "oldword here",
		"deep/sub/s.md": "subold here",
		"other/o.md":    "other note",
	})
	ix := mustOpen(t, v, Options{Debounce: 20 * time.Millisecond, ReconcileEvery: -1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := ix.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	root := v.Root()
	waitFor(t, ix, "subold", has("deep/sub/s.md"))
	if err := os.Rename(filepath.Join(root, "deep"), filepath.Join(root, "deep2")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ix, "oldword", func(r *Results) bool { return has("deep2/d.md")(r) && !has("deep/d.md")(r) })
	writeFile(t, v, "deep2/d.md", "newword here")
	waitFor(t, ix, "newword", has("deep2/d.md"))
	writeFile(t, v, "deep2/e.md", "addedword here")
	waitFor(t, ix, "addedword", has("deep2/e.md"))
	writeFile(t, v, "deep2/sub/s.md", "subnew here")
	waitFor(t, ix, "subnew", has("deep2/sub/s.md"))
	if err := os.Rename(filepath.Join(root, "deep2", "sub"), filepath.Join(root, "other", "sub")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ix, "subnew", func(r *Results) bool { return has("other/sub/s.md")(r) && !has("deep2/sub/s.md")(r) })
	writeFile(t, v, "other/sub/s.md", "subthird here")
	waitFor(t, ix, "subthird", has("other/sub/s.md"))
	if res := mustSearch(t, ix, Query{Text: "subnew"}); len(res.Hits) != 0 {
		t.Errorf("old text still found: %v", paths(res))
	}
}

// TestSameNameInTwoUnicodeForms: on Linux a folder can hold café.md in
// NFC and in NFD side by side. The index has one key per name; it keeps
// the NFC one and says so, in the warnings index status and the doctor
// show, rather than drop one of them silently.
func TestSameNameInTwoUnicodeForms(t *testing.T) {
	v := mustVault(t, map[string]string{"notes/café.md": "# Café\n\nlinuxword shared\n"})
	nfd := filepath.Join(v.Root(), "notes", "cafe\u0301.md")
	if err := os.WriteFile(nfd, []byte("# Cafe\n\nmacword shared\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(filepath.Join(v.Root(), "notes")); len(entries) != 2 {
		t.Skip("this file system keeps one name per Unicode form (macOS, Windows)")
	}
	ctx := context.Background()
	ix := mustOpen(t, v, Options{NoServe: true})
	defer ix.Close()
	check := func(when string) {
		t.Helper()
		if res := mustSearch(t, ix, Query{Text: "linuxword"}); len(res.Hits) != 1 || res.Hits[0].Path != "notes/café.md" {
			t.Errorf("%s: the NFC note: %v", when, paths(res))
		}
		warned := false
		for _, fw := range ix.FileWarnings() {
			for _, w := range fw.Warnings {
				warned = warned || strings.Contains(w, "cafe\u0301.md") && strings.Contains(w, "rename one")
			}
		}
		if !warned {
			t.Errorf("%s: no warning about the NFD twin: %+v", when, ix.FileWarnings())
		}
	}
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	check("after a sync")
	if err := ix.Rebuild(ctx, nil); err != nil {
		t.Fatal(err)
	}
	check("after a rebuild")
}
