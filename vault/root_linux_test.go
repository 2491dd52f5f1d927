package vault

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBeneathAgreesWithRoot: the one-call open (openat2 RESOLVE_BENEATH)
// succeeds only where os.Root succeeds, on the same file, and for a
// symlink Lstat describes the link: every path below is tried both ways.
func TestBeneathAgreesWithRoot(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	for _, mk := range []func() error{
		func() error { return os.MkdirAll(filepath.Join(dir, "a/b"), 0o755) },
		func() error { return os.WriteFile(filepath.Join(dir, "a/b/f.md"), []byte("inside"), 0o644) },
		func() error { return os.WriteFile(filepath.Join(outside, "secret"), []byte("outside"), 0o644) },
		func() error { return os.Symlink("b/f.md", filepath.Join(dir, "a/rel")) },
		func() error { return os.Symlink("../a/b", filepath.Join(dir, "a/updown")) },
		func() error { return os.Symlink(filepath.Join(dir, "a/b/f.md"), filepath.Join(dir, "a/abs-inside")) },
		func() error { return os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "a/abs-out")) },
		func() error {
			return os.Symlink("../../"+filepath.Base(outside)+"/secret", filepath.Join(dir, "a/rel-out"))
		},
		func() error { return os.Symlink("/", filepath.Join(dir, "root")) },
	} {
		if err := mk(); err != nil {
			t.Fatal(err)
		}
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, ok := dirOf(r); !ok {
		t.Fatal("the root's folder did not open")
	}
	for _, rel := range []string{
		".", "a", "a/b/f.md", "a/rel", "a/updown/f.md", "a/updown", "a/abs-inside", "a/abs-out",
		"a/rel-out", "root", "root/etc/hostname", "a/../a/b/f.md", "../x", "a/missing", "a/b/f.md/x",
	} {
		t.Run(rel, func(t *testing.T) {
			for _, nofollow := range []bool{false, true} {
				want, werr := r.Stat(rel)
				if nofollow {
					want, werr = r.Lstat(rel)
				}
				got, ok := statBeneath(r, rel, nofollow)
				if ok && werr != nil {
					t.Fatalf("nofollow=%v: openat2 reached what os.Root refuses (%v)", nofollow, werr)
				}
				if ok && (!os.SameFile(got, want) || got.Mode() != want.Mode() || got.Name() != want.Name()) {
					t.Fatalf("nofollow=%v: openat2 found %v %v, os.Root %v %v", nofollow, got.Name(), got.Mode(), want.Name(), want.Mode())
				}
			}
			f, ok := openBeneath(r, rel, os.O_RDONLY, 0)
			g, gerr := r.Open(rel)
			if ok {
				defer f.Close()
				if gerr != nil {
					t.Fatalf("openat2 opened what os.Root refuses (%v)", gerr)
				}
				defer g.Close()
				a, _ := f.Stat()
				b, _ := g.Stat()
				if !os.SameFile(a, b) {
					t.Fatal("openat2 opened another file than os.Root")
				}
			} else if gerr == nil {
				g.Close()
			}
		})
	}
	// The paths that stay inside are taken by the fast path (else it
	// would be tested above for nothing).
	for _, rel := range []string{"a/b/f.md", "a/rel", "a/updown/f.md"} {
		if data, ok, err := readBeneath(r, rel); !ok || err != nil || string(data) != "inside" {
			t.Errorf("%s: read %q %v %v, want the one-call read of \"inside\"", rel, data, ok, err)
		}
	}
	// Creating a file goes the fast way too, with the permissions asked.
	f, ok := openBeneath(r, "a/b/new.md", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if !ok {
		t.Fatal("create: not through openat2")
	}
	f.Close()
	if st, err := os.Stat(filepath.Join(dir, "a/b/new.md")); err != nil || st.Mode().Perm()&^0o600 != 0 {
		t.Fatalf("created: %v %v", st, err)
	}
}
