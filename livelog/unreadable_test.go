package livelog

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestVerifyNamesWhatNoReaderReads: a feed replaced by a symbolic link and
// a folder named like a feed are skipped by every reader; verify names
// each in a note, and entries this machine saw in the replaced feed are
// reported as removed.
func TestVerifyNamesWhatNoReaderReads(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need a privilege on Windows")
	}
	v := mustVault(t)
	l := mustLog(t, v)
	mustAppend(t, l, "lyra", "one")
	mustAppend(t, l, "ella", "two")
	if r := mustVerify(t, l); !r.OK(true) || len(r.Notes) != 0 {
		t.Fatalf("before: %+v", r)
	}
	feed := feedFile(l, "ella")
	elsewhere := filepath.Join(t.TempDir(), "ella.md")
	if err := os.Rename(feed, elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, feed); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(filepath.Dir(feed), "mallory@box.md")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	r := mustVerify(t, l)
	notes := strings.Join(r.Notes, "\n")
	for _, want := range []string{"log/live/2026-11/ella@box.md is not a regular file", "log/live/2026-11/mallory@box.md is not a regular file"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if r.OK(false) || r.Counts[StatusRemoved] == 0 {
		t.Errorf("ella's entry, seen here, is not reported removed: %v %+v", r.Counts, r.Findings)
	}
	// Put back, the feed reads and verifies again, with no note.
	os.Remove(feed)
	os.Remove(folder)
	if err := os.Rename(elsewhere, feed); err != nil {
		t.Fatal(err)
	}
	if r := mustVerify(t, l); !r.OK(true) || len(r.Notes) != 0 {
		t.Fatalf("after putting it back: %+v", r)
	}
}
