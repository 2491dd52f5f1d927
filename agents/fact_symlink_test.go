//go:build unix

package agents

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-memory/nexus/vault"
)

// TestReadFactThroughALinkOutSaysSo: a fact file replaced by a symlink to
// a file outside the vault is refused as such, by slug and by name, and
// the outside file's text never comes back.
func TestReadFactThroughALinkOutSaysSo(t *testing.T) {
	v := mustFactVault(t)
	f := mustWriteFact(t, v, FactInput{Name: "n1", Type: "project", Description: "d", Body: "body"})
	outside := filepath.Join(t.TempDir(), "outside.md")
	if err := os.WriteFile(outside, []byte("---\nname: n1\n---\nOUTSIDE-SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(v.Root(), filepath.FromSlash(f.Path))
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, p); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{f.Slug, "n1"} {
		got, err := ReadFact(v, "lyra", key)
		if !errors.Is(err, vault.ErrUnsafePath) || !strings.Contains(err.Error(), "symlink") {
			t.Fatalf("ReadFact(%q) through a link out: %v", key, err)
		}
		if strings.Contains(got.Body, "OUTSIDE") {
			t.Fatalf("ReadFact(%q) returned the outside file", key)
		}
	}
}
