//go:build !windows

package vault

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestSymlinksLeavingTheVault: a vault path replaced by a symlink to a file
// outside, a folder outside or "/" is never read or written through —
// every helper answers ErrUnsafePath — and MustPath does not panic; a
// relative link that stays inside is followed.
func TestSymlinksLeavingTheVault(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.md")
	if err := os.WriteFile(secret, []byte("outside secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, link, target, file string
	}{
		{"file to outside file", "agents/ella/MEMORY.md", secret, "agents/ella/MEMORY.md"},
		{"file to outside folder", "agents/ella/MEMORY.md", outside, "agents/ella/MEMORY.md"},
		{"folder to outside folder", "agents/ella", outside, "agents/ella/secret.md"},
		{"folder to /", "agents/ella", "/", "agents/ella/etc/hostname"},
		{"state folder to outside", ".nexus/state", outside, ".nexus/state/secret.md"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, _, err := Init(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(v.Root(), filepath.FromSlash(tt.link))
			os.RemoveAll(link)
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(tt.target, link); err != nil {
				t.Fatal(err)
			}
			p := v.MustPath(tt.file) // must not panic
			unsafe := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, ErrUnsafePath) {
					t.Errorf("%s: err = %v, want ErrUnsafePath", what, err)
				}
			}
			_, err = ReadFile(p)
			unsafe("ReadFile", err)
			_, err = v.ReadFile(tt.file)
			unsafe("v.ReadFile", err)
			_, err = ReadStable(p)
			unsafe("ReadStable", err)
			_, err = Stat(p)
			unsafe("Stat", err)
			_, err = ReadDir(filepath.Dir(p))
			if tt.file != tt.link {
				unsafe("ReadDir", err)
			}
			unsafe("ReplaceIf", ReplaceIf(p, []byte("outside secret"), []byte("x"), 0o644))
			if tt.file != tt.link { // a link at the file itself is replaced by WriteFile, not followed
				unsafe("WriteFile", WriteFile(p, []byte("x"), 0o644))
			} else if err := WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Errorf("WriteFile over a link: %v", err)
			}
			if got, _ := os.ReadFile(secret); string(got) != "outside secret" {
				t.Errorf("outside file now %q", got)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 1 {
				t.Errorf("outside folder holds %d entries, want 1", len(ents))
			}
		})
	}
	t.Run("relative link inside is followed", func(t *testing.T) {
		v, _, err := Init(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(v.MustPath("notes/real.md"), []byte("inside"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("notes/real.md", v.MustPath("alias.md")); err != nil {
			t.Fatal(err)
		}
		if got, err := v.ReadFile("alias.md"); err != nil || string(got) != "inside" {
			t.Errorf("read through an inside link: %q, %v", got, err)
		}
	})
}

// TestSwappedLinkNeverEscapes: a link flipped between a place inside the
// vault and one outside while files are read and written through it never
// lets a byte from outside into a read, nor a write outside.
func TestSwappedLinkNeverEscapes(t *testing.T) {
	v, _, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	const marker = "OUTSIDE"
	if err := os.WriteFile(filepath.Join(outside, "MEMORY.md"), []byte(marker), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(v.MustPath("real/MEMORY.md"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := v.MustPath("home")
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	stop, flipped := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		defer func() { flipped <- n }()
		targets := []string{outside, "real"}
		for ; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := link + ".flip"
			os.Remove(tmp)
			if os.Symlink(targets[n%2], tmp) != nil || os.Rename(tmp, link) != nil {
				t.Error("flip the link")
				return
			}
		}
	}()
	p := v.MustPath("home/MEMORY.md")
	for i := range 3000 {
		if got, err := ReadFile(p); err == nil && string(got) == marker {
			t.Fatalf("read %d went outside the vault", i)
		}
		WriteFile(p, []byte("written"), 0o644)
		if i%2 == 0 {
			ReplaceIf(p, []byte("written"), []byte("swapped"), 0o644)
		}
	}
	close(stop)
	if n := <-flipped; n < 10 {
		t.Logf("the link flipped only %d times", n)
	}
	got, _ := os.ReadFile(filepath.Join(outside, "MEMORY.md"))
	ents, _ := os.ReadDir(outside)
	if string(got) != marker || len(ents) != 1 {
		t.Fatalf("outside changed: %q, %d entries", got, len(ents))
	}
}
