package livelog

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
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

// TestUnreadEndLeavesOutUnreadableFeeds: a feed that cannot be read costs
// the reader only that feed. UnreadEnd returns the other feeds' entries
// with an *UnreadableError naming it, and an Ack of what was shown keeps
// the unreadable feed's place.
func TestUnreadEndLeavesOutUnreadableFeeds(t *testing.T) {
	cases := []struct {
		name string
		// spoil makes ella's feed unreadable for l, which has listed the
		// live log before.
		spoil func(t *testing.T, l *Log, feed string)
	}{
		{"permission denied", func(t *testing.T, l *Log, feed string) {
			if os.Geteuid() == 0 || runtime.GOOS == "windows" {
				t.Skip("root reads a file whatever its permissions")
			}
			if err := os.Chmod(feed, 0); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(feed, 0o644) })
		}},
		{"read error", func(t *testing.T, l *Log, feed string) {
			// A folder replaces the feed behind the listing this Log
			// keeps (the month folder's time put back): the open
			// succeeds and every read fails, for root too.
			month := filepath.Dir(feed)
			st, err := os.Stat(month)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(feed, feed+".away"); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(feed, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(feed + ".away"); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(month, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := mustVault(t)
			l := mustLog(t, v)
			mustAppend(t, l, "ella", "ella's news")
			mustAppend(t, l, "mallory", "mallory's news")
			feed := feedFile(l, "ella")
			// An old month folder, so l keeps its listing.
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(filepath.Dir(feed), old, old); err != nil {
				t.Fatal(err)
			}
			if es, total, err := l.UnreadEnd("lyra", 10, false); err != nil || total != 2 {
				t.Fatalf("before: %v, %d, %v", summaries(es), total, err)
			}
			c.spoil(t, l, feed)
			for _, oldest := range []bool{false, true} {
				es, total, err := l.UnreadEnd("lyra", 10, oldest)
				var ue *UnreadableError
				if !errors.As(err, &ue) || len(ue.Files) != 1 || !strings.HasSuffix(ue.Files[0], "ella@"+testDevice+".md") {
					t.Fatalf("oldest %v: err = %v, want an UnreadableError naming ella's feed", oldest, err)
				}
				if got := summaries(es); total != 1 || len(got) != 1 || got[0] != "mallory's news" {
					t.Fatalf("oldest %v: %v of %d, want mallory's entry", oldest, got, total)
				}
				if oldest {
					if err := l.Ack("lyra", es[0]); err != nil {
						t.Fatalf("ack what was shown: %v", err)
					}
				}
			}
			// Mallory's entry is read; ella's feed is still named.
			es, total, err := l.UnreadEnd("lyra", 10, false)
			if !errors.As(err, new(*UnreadableError)) || total != 0 || len(es) != 0 {
				t.Fatalf("after the ack: %v of %d, %v", summaries(es), total, err)
			}
		})
	}
}
