package livelog

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// ageDirs sets the modification time of the live log's folders an hour
// back, as if nothing had been added to them for that long.
func ageDirs(t *testing.T, v *vault.Vault) time.Time {
	t.Helper()
	old := time.Now().Add(-time.Hour).Truncate(time.Second).Add(123456789)
	root := v.MustPath(vault.LiveLogDir)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			err = os.Chtimes(p, old, old)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return old
}

func citedWriters(e Entry) []string {
	var out []string
	for _, c := range e.Cites {
		out = append(out, c.Writer)
	}
	return out
}

// A long-lived process keeps the listing of a folder whose time is old;
// a feed file a sync tool then puts into it changes the folder's time,
// and the next append sees (and cites) it.
func TestListingCacheSeesNewFeed(t *testing.T) {
	a, b := twoMachines(t, "laptop")
	a.append(t, "lyra", "on the server")
	b.append(t, "ella", "on the laptop")
	ageDirs(t, b.v)
	b.append(t, "ella", "listing kept")
	month := vault.LiveLogDir + "/2026-11"
	b.l.dirMu.Lock()
	_, cached := b.l.dirs[month]
	b.l.dirMu.Unlock()
	if !cached {
		t.Fatalf("the listing of %s, an hour old, was not kept", month)
	}
	a.syncTo(t, b) // writes lyra@vps.md into B's month folder
	e := b.append(t, "ella", "after the sync")
	if !slices.Contains(citedWriters(e), "lyra@vps") {
		t.Fatalf("the append after the sync cites %v, not lyra@vps's new feed", citedWriters(e))
	}
}

// A folder changed just before it is listed is listed again next time,
// however its time compares: the change may share the clock's tick.
func TestListingCacheFreshFolder(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	mustAppend(t, l, "lyra", "one")
	month := vault.LiveLogDir + "/2026-11"
	l.dirMu.Lock()
	_, cached := l.dirs[month]
	l.dirMu.Unlock()
	if cached {
		t.Fatalf("the listing of %s, changed a moment ago, was kept", month)
	}
	mustAppend(t, l, "ella", "two")
	files, err := l.liveFiles()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("listed %v, want lyra's and ella's feeds", files)
	}
}

// A month folder replaced whole (renamed into place) is seen even when
// the new folder carries the old one's time: its inode differs.
func TestListingCacheReplacedFolder(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no inode numbers; Windows cannot rename a folder over another")
	}
	v := mustVault(t)
	l := mustLog(t, v)
	mustAppend(t, l, "lyra", "one")
	old := ageDirs(t, v)
	if _, err := l.liveFiles(); err != nil {
		t.Fatal(err)
	}
	month := v.MustPath(vault.LiveLogDir + "/2026-11")
	repl := month + ".new"
	if err := os.Mkdir(repl, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"lyra@box.md", "ella@laptop.md"} {
		data, _ := os.ReadFile(filepath.Join(month, "lyra@box.md"))
		if err := os.WriteFile(filepath.Join(repl, n), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(month, month+".gone"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(repl, month); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(month, old, old); err != nil {
		t.Fatal(err)
	}
	files, err := l.liveFiles()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].writer != "ella@laptop" {
		t.Fatalf("after the folder was replaced: %v", files)
	}
}

func TestSafeAge(t *testing.T) {
	for _, c := range []struct {
		t    time.Time
		want time.Duration
	}{
		{time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC), 100 * time.Millisecond},
		{time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), 3 * time.Second},       // whole seconds (FAT, HFS+)
		{time.Date(2026, 12, 1, 10, 0, 0, 5000000, time.UTC), 3 * time.Second}, // whole milliseconds
	} {
		if got := safeAge(c.t); got != c.want {
			t.Errorf("safeAge(%v) = %v, want %v", c.t, got, c.want)
		}
	}
}

// A feed file replaced by a sync tool with one of the same size and
// modification time, the folder's time set back as well, while this
// process keeps the folder's listing: only names are kept, so the next
// append reads the new tail and verify names the edited entry.
func TestListingCacheReplacedFileSameStat(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	for i := range 3 {
		mustAppend(t, l, "lyra", fmt.Sprint("entry ", i+1))
		mustAppend(t, l, "ella", fmt.Sprint("other ", i+1))
	}
	old := ageDirs(t, v)
	mustAppend(t, l, "ella", "listing kept")
	path := feedFile(l, "lyra")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	edited := bytes.Replace(data, []byte("entry 2"), []byte("entry X"), 1)
	if bytes.Equal(edited, data) || len(edited) != len(data) {
		t.Fatal("test edit did not apply")
	}
	tmp := filepath.Join(filepath.Dir(path), ".sync-tmp")
	if err := os.WriteFile(tmp, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Dir(path), old, old); err != nil {
		t.Fatal(err)
	}
	l.dirMu.Lock()
	_, cached := l.dirs[vault.LiveLogDir+"/2026-11"]
	l.dirMu.Unlock()
	if !cached {
		t.Fatal("the month folder's listing was not kept")
	}
	if e := mustAppend(t, l, "lyra", "after the replacement"); e.Seq != 4 {
		t.Fatalf("numbered %d after the replacement, want 4", e.Seq)
	}
	if r := mustVerify(t, l); r.Counts[StatusEdited] != 1 || r.OK(false) {
		t.Fatalf("verify after a same-size, same-time replacement: %v %+v", r.Counts, r.Findings)
	}
}
