package links

import (
	"testing"

	"github.com/nexus-memory/nexus/index/indextest"
)

// BenchmarkFind10k is `nexus links` on a 10k-note vault, warm (files in
// the page cache): the scan, the note's links and every backlink.
func BenchmarkFind10k(b *testing.B) {
	dir := b.TempDir()
	v, err := indextest.Generate(dir, indextest.Options{Notes: 10000})
	if err != nil {
		b.Fatal(err)
	}
	note := v.Paths[len(v.Paths)/2]
	b.ResetTimer()
	for range b.N {
		if _, err := Find(dir, note); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScan10k is the folder walk alone (names, no file read).
func BenchmarkScan10k(b *testing.B) {
	dir := b.TempDir()
	if _, err := indextest.Generate(dir, indextest.Options{Notes: 10000}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := Scan(dir); err != nil {
			b.Fatal(err)
		}
	}
}
