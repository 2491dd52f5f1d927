//go:build !windows

package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestInRootNeverWritesOutside: with a symlink at the file or at its
// folder, leading outside the root, inside it, or to "/", WriteFileIn and
// ReplaceIfIn never change a byte outside the root.
func TestInRootNeverWritesOutside(t *testing.T) {
	for _, tt := range []struct {
		name    string
		link    string // the link, inside the vault
		target  string // "out" (the outside folder), "out/f.md", "in" (relative), "abs-in", "/"
		write   string // the file written, relative to the root
		wantErr bool   // for WriteFileIn; ReplaceIfIn also fails when the file is a link leaving
	}{
		{"file link to outside file", "a.md", "out/f.md", "a.md", false},
		{"folder link to outside", "sub", "out", "sub/a.md", true},
		{"folder link to /", "sub", "/", "sub/a.md", true},
		{"folder link inside, relative", "sub", "in", "sub/a.md", false},
		{"folder link inside, absolute", "sub", "abs-in", "sub/a.md", true}, // os.Root follows relative links only
		{"parent of parent to outside", "deep", "out", "deep/x/a.md", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			vault, out := filepath.Join(base, "vault"), filepath.Join(base, "out")
			for _, d := range []string{filepath.Join(vault, "in"), filepath.Join(out, "x")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(out, "f.md"), []byte("outside"), 0o644); err != nil {
				t.Fatal(err)
			}
			target := tt.target
			switch target {
			case "out", "out/f.md":
				target = filepath.Join(base, target)
			case "abs-in":
				target = filepath.Join(vault, "in")
			}
			if err := os.Symlink(target, filepath.Join(vault, tt.link)); err != nil {
				t.Fatal(err)
			}
			r, err := os.OpenRoot(vault)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			before := tree(t, out)
			err = WriteFileIn(r, tt.write, []byte("new"), 0o644)
			if (err != nil) != tt.wantErr {
				t.Errorf("WriteFileIn: err = %v, want error %v", err, tt.wantErr)
			}
			if err == nil {
				if got, rerr := r.ReadFile(tt.write); rerr != nil || string(got) != "new" {
					t.Errorf("read back %q, %v", got, rerr)
				}
			}
			if err := ReplaceIfIn(r, tt.write, []byte("never held"), []byte("newer"), 0o644); err == nil {
				t.Errorf("ReplaceIfIn against bytes the file never held: no error")
			}
			if after := tree(t, out); after != before {
				t.Errorf("outside changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// tree is every name and content under dir, in one string.
func tree(t *testing.T, dir string) string {
	t.Helper()
	s := ""
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		s += p + ";"
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			s += string(b) + ";"
		}
		return nil
	})
	return s
}
