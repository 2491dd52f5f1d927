package indextest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	va, err := Generate(a, Options{Notes: 60, Seed: 5, Needles: true, Big: 1})
	if err != nil {
		t.Fatal(err)
	}
	vb, err := Generate(b, Options{Notes: 60, Seed: 5, Needles: true, Big: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(va.Paths) != len(vb.Paths) || va.Bytes != vb.Bytes || len(va.Needles) != 20 {
		t.Fatalf("vaults differ: %d/%d files, %d/%d bytes, %d needles", len(va.Paths), len(vb.Paths), va.Bytes, vb.Bytes, len(va.Needles))
	}
	korean := 0
	for _, p := range va.Paths {
		da, _ := os.ReadFile(filepath.Join(a, filepath.FromSlash(p)))
		db, _ := os.ReadFile(filepath.Join(b, filepath.FromSlash(p)))
		if string(da) != string(db) {
			t.Fatalf("%s differs", p)
		}
		if strings.ContainsAny(string(da), "배포실패서버장애") {
			korean++
		}
	}
	for _, n := range va.Needles {
		data, err := os.ReadFile(filepath.Join(a, filepath.FromSlash(n.Path)))
		if err != nil {
			t.Fatal(err)
		}
		first := strings.Fields(n.Query)[0]
		if !strings.Contains(string(data), first) {
			t.Errorf("needle %q not in %s", n.Query, n.Path)
		}
	}
	if korean == 0 {
		t.Error("no Korean text")
	}
}
