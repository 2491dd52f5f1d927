package links

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nexus-memory/nexus/index/indextest"
)

// BenchmarkFind10k is `nexus links` on a 10k-note vault, warm (files in
// the page cache): the walk, the note's links and every backlink,
// "uncached" reading every note (as before the links cache) and "cached"
// from a current links cache.
func BenchmarkFind10k(b *testing.B) {
	dir := b.TempDir()
	v, err := indextest.Generate(dir, indextest.Options{Notes: 10000})
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".nexus", "index"), 0o755); err != nil {
		b.Fatal(err)
	}
	note := v.Paths[len(v.Paths)/2]
	b.Run("uncached", func(b *testing.B) {
		for b.Loop() {
			lv, err := Scan(dir)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := lv.Find(note); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		if _, err := Find(dir, note); err != nil { // writes the cache
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := Find(dir, note); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkScan10k is the folder walk alone (names, no file read).
func BenchmarkScan10k(b *testing.B) {
	dir := b.TempDir()
	if _, err := indextest.Generate(dir, indextest.Options{Notes: 10000}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Scan(dir); err != nil {
			b.Fatal(err)
		}
	}
}
