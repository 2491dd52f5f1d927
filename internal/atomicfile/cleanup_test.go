package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestIsTempName(t *testing.T) {
	for name, want := range map[string]bool{
		".MEMORY.md.tmp-123456":       true,
		".r-abc123.md.tmp-4294967295": true,
		".lyra.cache.tmp-1":           true,
		".로그.md.tmp-42":               true,
		"MEMORY.md.tmp-123":           false, // no leading dot: not ours
		".MEMORY.md.tmp-":             false,
		".MEMORY.md.tmp-12a":          false, // a person's name, not CreateTemp's digits
		".notes.tmp-draft":            false,
		".tmp-123":                    false, // no file name before it
		".witness.json.abc.tmp":       false,
		"MEMORY.md":                   false,
	} {
		if got := IsTempName(name); got != want {
			t.Errorf("IsTempName(%q) = %v, want %v", name, got, want)
		}
	}
}

// touch makes a file with the given age.
func touch(t *testing.T, dir, name string, age time.Duration, now time.Time) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	mt := now.Add(-age)
	if err := os.Chtimes(p, mt, mt); err != nil {
		t.Fatal(err)
	}
	return p
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

func TestRemoveStale(t *testing.T) {
	now := time.Now()
	dir := t.TempDir()
	touch(t, dir, "MEMORY.md", time.Hour, now)
	touch(t, dir, ".MEMORY.md.tmp-111", StaleAge+time.Minute, now) // a killed writer's
	touch(t, dir, ".MEMORY.md.tmp-222", StaleAge, now)             // exactly the age: stale
	touch(t, dir, ".MEMORY.md.tmp-333", time.Second, now)          // a live writer's
	touch(t, dir, ".MEMORY.md.tmp-444", StaleAge-time.Minute, now) // still young
	touch(t, dir, ".notes.tmp-draft", time.Hour*24, now)           // a person's dot-file
	touch(t, dir, "old.tmp-5", time.Hour*24, now)                  // not dot-named
	if err := os.Mkdir(filepath.Join(dir, ".d.md.tmp-9"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	touch(t, sub, ".x.md.tmp-7", time.Hour, now) // below dir: not this folder's sweep

	got := RemoveStale(dir, now)
	slices.Sort(got)
	if want := []string{".MEMORY.md.tmp-111", ".MEMORY.md.tmp-222"}; !slices.Equal(got, want) {
		t.Fatalf("removed %q, want %q", got, want)
	}
	want := []string{".MEMORY.md.tmp-333", ".MEMORY.md.tmp-444", ".d.md.tmp-9", ".notes.tmp-draft", "MEMORY.md", "old.tmp-5", "sub"}
	if left := names(t, dir); !slices.Equal(left, want) {
		t.Fatalf("left %q, want %q", left, want)
	}
	if left := names(t, sub); len(left) != 1 {
		t.Fatalf("sub: %q", left)
	}
	if got := RemoveStale(filepath.Join(dir, "missing"), now); got != nil {
		t.Fatalf("missing folder: %q", got)
	}
}

// TestRemoveStaleBigFolder: a folder over the limit is not swept (listing
// it would cost every write); doctor reports what is left there.
func TestRemoveStaleBigFolder(t *testing.T) {
	now := time.Now()
	dir := t.TempDir()
	for i := range sweepMaxEntries {
		touch(t, dir, fmt.Sprintf("n%04d.md", i), time.Hour, now)
	}
	old := touch(t, dir, ".n0001.md.tmp-1", time.Hour, now)
	if got := RemoveStale(dir, now); got != nil {
		t.Fatalf("swept a folder of %d entries: %q", sweepMaxEntries+1, got)
	}
	if _, err := os.Stat(old); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "n0000.md")) // now exactly at the limit
	if got := RemoveStale(dir, now); len(got) != 1 {
		t.Fatalf("folder at the limit: removed %q", got)
	}
}

// TestWriteSweepsItsFolder: the next atomic write into a folder removes the
// old temp files there and keeps fresh ones, and lists the folder again only
// after sweepEvery.
func TestWriteSweepsItsFolder(t *testing.T) {
	now := time.Now()
	clock := now
	sweepNow = func() time.Time { return clock }
	t.Cleanup(func() { sweepNow = time.Now })
	dir := t.TempDir()
	old := touch(t, dir, ".a.md.tmp-1", time.Hour, now)
	fresh := touch(t, dir, ".a.md.tmp-2", time.Second, now)
	if err := WriteFile(filepath.Join(dir, "a.md"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("old temp file kept: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("fresh temp file removed: %v", err)
	}
	// A second leftover soon after: not listed again yet.
	old2 := touch(t, dir, ".b.md.tmp-3", time.Hour, now)
	if err := ReplaceIf(filepath.Join(dir, "b.md"), nil, []byte("b"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old2); err != nil {
		t.Fatalf("folder swept twice within %s: %v", sweepEvery, err)
	}
	clock = now.Add(sweepEvery)
	if err := WriteFile(filepath.Join(dir, "a.md"), []byte("newer"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old2); !os.IsNotExist(err) {
		t.Fatalf("old temp file kept after %s: %v", sweepEvery, err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("fresh temp file removed: %v", err)
	}
}

// BenchmarkSweepStale is the cost of the sweep a writer pays the first time
// in a process it writes into a folder, next to the write itself.
func BenchmarkSweepStale(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		dir := b.TempDir()
		now := time.Now()
		for i := range n {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("r-%06d.md", i)), []byte("x"), 0o644)
		}
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			for b.Loop() {
				RemoveStale(dir, now)
			}
		})
	}
	b.Run("write+fsync", func(b *testing.B) {
		dir := b.TempDir()
		for b.Loop() {
			if err := WriteFile(filepath.Join(dir, "a.md"), []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	})
}
