package index

import (
	"context"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/vault"
	"golang.org/x/text/unicode/norm"
)

// TestFileDigest checks that every field the freshness check compares
// changes a set's digest, and that the order of the files does not.
func TestFileDigest(t *testing.T) {
	type file struct {
		key, disk          string
		size, mtime, ctime int64
	}
	sum := func(files ...file) digest {
		var d digest
		for _, f := range files {
			d.add(fileDigest(f.key, f.disk, f.size, f.mtime, f.ctime))
		}
		return d
	}
	a := file{"notes/a.md", "", 120, 1733000000000000001, 1733000000000000005}
	b := file{"notes/b.md", "", 120, 1733000000000000002, 1733000000000000005}
	base := sum(a, b)
	if sum(b, a) != base {
		t.Fatal("the digest depends on the order of the files")
	}
	with := func(f file, change func(*file)) file { change(&f); return f }
	for name, other := range map[string]digest{
		"size +1":             sum(with(a, func(f *file) { f.size++ }), b),
		"mtime +1ns":          sum(with(a, func(f *file) { f.mtime++ }), b),
		"mtime -1s":           sum(with(a, func(f *file) { f.mtime -= 1e9 }), b),
		"renamed":             sum(with(a, func(f *file) { f.key = "notes/c.md" }), b),
		"key case":            sum(with(a, func(f *file) { f.key = "notes/A.md" }), b),
		"on-disk path":        sum(with(a, func(f *file) { f.disk = "notes/a.md" }), b),
		"ctime +1ns":          sum(with(a, func(f *file) { f.ctime++ }), b),
		"ctime unknown":       sum(with(a, func(f *file) { f.ctime = 0 }), b),
		"mtime/ctime swapped": sum(with(a, func(f *file) { f.mtime, f.ctime = f.ctime, f.mtime }), b),
		"mtimes swapped":      sum(with(a, func(f *file) { f.mtime = b.mtime }), with(b, func(f *file) { f.mtime = a.mtime })),
		"size/mtime swapped":  sum(with(a, func(f *file) { f.size, f.mtime = 1733000000000000001, 120 }), b),
		"added":               sum(a, b, file{"notes/c.md", "", 0, 0, 0}),
		"removed":             sum(a),
		"key/disk split":      sum(with(a, func(f *file) { f.key, f.disk = "notes/", "a.md" }), b),
	} {
		if other == base {
			t.Errorf("%s: digest unchanged", name)
		}
	}
	// Removing and re-adding a file's digest (what manifest.set does)
	// gives the sum of the files that are left.
	d := base
	d.sub(fileDigest(a.key, a.disk, a.size, a.mtime, a.ctime))
	if d != sum(b) {
		t.Error("sub is not the inverse of add")
	}
}

// TestManifestHeader checks the header's count, digest and CRC: a
// manifest whose lines were changed is refused, and one from an older
// Nexus (no digest) is decoded in full.
func TestManifestHeader(t *testing.T) {
	m := newManifest()
	m.set("a.md", fileState{Size: 1, Mtime: 2})
	m.set("노트.md", fileState{Size: 3, Mtime: 4, Disk: norm.NFD.String("노트.md")})
	m.set("a.md", fileState{Size: 5, Mtime: 6}) // replaces
	m.set("gone.md", fileState{Size: 7, Mtime: 8})
	m.del("gone.md")
	m.del("never.md")
	data := encodeManifest(m)
	h, err := decodeManifestHead(data)
	if err != nil || !h.headSum || h.n != 2 || h.sum != m.sum || h.files != nil {
		t.Fatalf("header: %+v %v (want n 2, sum %x)", h, err, m.sum)
	}
	if err := h.decodeBody(); err != nil || h.sum != m.sum || len(h.files) != 2 || h.files["a.md"].Size != 5 {
		t.Fatalf("body: %v %+v", err, h)
	}
	// One byte of the lines changed: the CRC refuses it.
	bad := []byte(strings.Replace(string(data), "\t6\t", "\t7\t", 1))
	if _, err := decodeManifestHead(bad); err == nil {
		t.Error("a changed line passed the CRC")
	}
	// A header of an older Nexus: no digest, so it is read in full.
	head, body, _ := strings.Cut(string(data), "\n")
	old := head[:strings.Index(head, " files=")] + "\n" + body
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, manifestFile), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := &Index{dir: dir}
	lm := ix.loadManifest()
	if lm.headSum || lm.files == nil || lm.n != 2 || lm.sum != m.sum || lm.Schema != schemaVersion {
		t.Errorf("older manifest: %+v", lm)
	}
}

// TestFreshAgreesWithDiff makes random changes to a vault (edits of the
// same size with the mtime moved by a nanosecond, an mtime restored,
// renames that keep the mtime, an NFC name replaced by its NFD form,
// swapped contents and mtimes, new and deleted files and folders) and
// checks after each that the digest shortcut and the full comparison with
// the manifest agree, then that a sync makes both say fresh.
func TestFreshAgreesWithDiff(t *testing.T) {
	v := mustVault(t, nil)
	root := v.Root()
	abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	ix := mustOpen(t, v, Options{NoServe: true})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(14, 1))
	var notes []string // vault-relative, as on disk
	add := func(rel, text string) {
		writeFile(t, v, rel, text)
		notes = append(notes, rel)
	}
	for i := range 12 {
		add(fmt.Sprintf("d%d/n%d.md", i%3, i), fmt.Sprintf("note %02d words", i))
	}
	add("노트/배포.md", "korean 00 words")
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	pick := func() int { return rng.IntN(len(notes)) }
	changes := []struct {
		name   string
		change func() bool // false: the change leaves size and mtime alone
	}{
		{"same size, mtime +1ns", func() bool {
			p := abs(notes[pick()])
			st, _ := os.Stat(p)
			os.WriteFile(p, []byte(strings.Repeat("x", int(st.Size()))), 0o644)
			os.Chtimes(p, st.ModTime(), st.ModTime().Add(time.Nanosecond))
			return true
		}},
		{"same size, mtime restored (seen by the change time; not on Windows, which has none)", func() bool {
			p := abs(notes[pick()])
			st, _ := os.Stat(p)
			os.WriteFile(p, []byte(strings.Repeat("y", int(st.Size()))), 0o644)
			os.Chtimes(p, st.ModTime(), st.ModTime())
			return runtime.GOOS != "windows"
		}},
		{"grown", func() bool {
			p := abs(notes[pick()])
			f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(" more")
			f.Close()
			return true
		}},
		{"renamed, mtime kept", func() bool {
			i := pick()
			to := strings.TrimSuffix(notes[i], ".md") + "r.md"
			os.Rename(abs(notes[i]), abs(to))
			notes[i] = to
			return true
		}},
		{"name now in NFD", func() bool {
			return renameBase(notes, abs, norm.NFD.String)
		}},
		{"name back in NFC", func() bool {
			return renameBase(notes, abs, norm.NFC.String)
		}},
		{"contents and mtimes swapped", func() bool {
			i, j := pick(), pick()
			if i == j {
				return false
			}
			pi, pj := abs(notes[i]), abs(notes[j])
			si, _ := os.Stat(pi)
			sj, _ := os.Stat(pj)
			di, _ := os.ReadFile(pi)
			dj, _ := os.ReadFile(pj)
			if si.Size() == sj.Size() && si.ModTime().Equal(sj.ModTime()) {
				return false
			}
			os.WriteFile(pi, dj, 0o644)
			os.WriteFile(pj, di, 0o644)
			os.Chtimes(pi, sj.ModTime(), sj.ModTime())
			os.Chtimes(pj, si.ModTime(), si.ModTime())
			return true
		}},
		{"new file", func() bool {
			add(fmt.Sprintf("d%d/new%d.md", rng.IntN(4), rng.IntN(1000)), "new words")
			return true
		}},
		{"deleted", func() bool {
			if len(notes) < 4 {
				return false
			}
			i := pick()
			os.Remove(abs(notes[i]))
			notes = append(notes[:i], notes[i+1:]...)
			return true
		}},
		{"folder moved", func() bool {
			from, to := "d1", fmt.Sprintf("m%d", rng.IntN(1000))
			if _, err := os.Stat(abs(from)); err != nil {
				return false
			}
			os.Rename(abs(from), abs(to))
			for i, n := range notes {
				if strings.HasPrefix(n, from+"/") {
					notes[i] = to + n[len(from):]
				}
			}
			return true
		}},
		{"a file that is not a note", func() bool {
			writeFile(t, v, "d0/x.txt", "not markdown")
			return false
		}},
		{"mtimes set", func() bool {
			p := abs(notes[pick()])
			tm := base.Add(time.Duration(rng.IntN(1000)) * time.Second)
			os.Chtimes(p, tm, tm)
			return true
		}},
	}
	for step := range 120 {
		c := changes[rng.IntN(len(changes))]
		changed := c.change()
		files, err := ix.walk(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ix.mu.Lock()
		fresh := ix.fresh(files)
		ch, gone := ix.diff(files.byKey())
		ix.mu.Unlock()
		if fresh != (len(ch)+len(gone) == 0) {
			t.Fatalf("step %d (%s): digest says fresh=%v, the comparison finds %d changed, %d gone", step, c.name, fresh, len(ch), len(gone))
		}
		if changed && fresh {
			// Every change but those that keep size and mtime shows
			// (a same-mtime change that does not show is one the
			// change func reports as false).
			t.Fatalf("step %d (%s): not seen", step, c.name)
		}
		if err := ix.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		files, _ = ix.walk(ctx)
		ix.mu.Lock()
		fresh = ix.fresh(files)
		ix.mu.Unlock()
		if !fresh {
			t.Fatalf("step %d (%s): not fresh after a sync", step, c.name)
		}
		if step%10 == 0 {
			// The saved header says the same after a reopen.
			ix.Close()
			ix = mustOpen(t, v, Options{NoServe: true})
			if fresh, decoded := freshFromHeader(t, ix); !fresh || decoded {
				t.Fatalf("step %d: after a reopen fresh=%v, lines decoded=%v", step, fresh, decoded)
			}
		}
	}
}

// TestColdSyncReadsNoManifestLines is a cold search's path: a reopened
// index whose files did not change is proven fresh from the manifest's
// header, and one same-size edit with an mtime a nanosecond later is
// found, exactly as the full comparison finds it.
func TestColdSyncReadsNoManifestLines(t *testing.T) {
	v := mustVault(t, map[string]string{"a.md": "alpha kumquat", "b/c.md": "gamma words", "노트/배포.md": "배포 완료"})
	ctx := context.Background()
	ix := mustOpen(t, v, Options{NoServe: true})
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	ix.Close()

	cold := func() *Index {
		ix := mustOpen(t, v, Options{NoServe: true})
		if err := ix.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		return ix
	}
	ix = cold()
	if ix.man.files != nil {
		t.Error("a fresh vault's manifest lines were decoded")
	}
	if res := mustSearch(t, ix, Query{Text: "kumquat"}); !has("a.md")(res) {
		t.Errorf("kumquat: %v", paths(res))
	}
	if st, err := ix.Status(ctx); err != nil || st.Files != 3 || st.Pending != 0 {
		t.Errorf("status %+v %v", st, err)
	}
	ix.Close()

	p := filepath.Join(v.Root(), "a.md")
	st, _ := os.Stat(p)
	os.WriteFile(p, []byte("alpha durians"), 0o644) // same size
	os.Chtimes(p, st.ModTime(), st.ModTime().Add(time.Nanosecond))
	ix = cold()
	if res := mustSearch(t, ix, Query{Text: "durians"}); !has("a.md")(res) {
		t.Errorf("same-size edit not found: %v", paths(res))
	}
	if res := mustSearch(t, ix, Query{Text: "kumquat"}); has("a.md")(res) {
		t.Errorf("old text still found: %v", paths(res))
	}
	ix.Close()
	if ix = cold(); ix.man.files != nil {
		t.Error("after the edit was indexed, the next cold sync decoded the lines")
	}
}

// TestManifestLinesLost: a manifest whose lines do not decode although
// their CRC matches (no Nexus writes one) makes the next sync empty the
// index and index every file, leaving no document of a file that is gone.
func TestManifestLinesLost(t *testing.T) {
	v := mustVault(t, map[string]string{"a.md": "alpha kumquat", "b.md": "beta papaya"})
	ctx := context.Background()
	ix := mustOpen(t, v, Options{NoServe: true})
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	os.Remove(filepath.Join(v.Root(), "b.md"))
	mp := filepath.Join(v.Root(), ".nexus", "index", manifestFile)
	data, _ := os.ReadFile(mp)
	head, _, _ := strings.Cut(string(data), "\n")
	body := "not a manifest line\n"
	head = head[:strings.Index(head, " crc=")] + fmt.Sprintf(" crc=%08x", crc32.Checksum([]byte(body), castagnoli))
	os.WriteFile(mp, []byte(head+"\n"+body), 0o644)
	ix = mustOpen(t, v, Options{NoServe: true})
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if res := mustSearch(t, ix, Query{Text: "papaya"}); len(res.Hits) != 0 {
		t.Errorf("a deleted file is still found: %v", paths(res))
	}
	if res := mustSearch(t, ix, Query{Text: "kumquat"}); !has("a.md")(res) {
		t.Errorf("kumquat: %v", paths(res))
	}
	if st, _ := ix.Status(ctx); st.Pending != 0 || st.Files != 1 || st.Documents != 1 {
		t.Errorf("status %+v", st)
	}
}

// renameBase renames the first note whose file name form changes to that
// form (the folder keeps its name), reporting whether one did.
func renameBase(notes []string, abs func(string) string, form func(string) string) bool {
	for i, n := range notes {
		dir, base := filepath.Split(filepath.FromSlash(n))
		if f := form(base); f != base {
			to := filepath.ToSlash(dir + f)
			if err := os.Rename(abs(n), abs(to)); err != nil {
				return false
			}
			notes[i] = to
			return true
		}
	}
	return false
}

// freshFromHeader walks the vault and reports whether ix's manifest proves
// the index fresh, and whether that took decoding the manifest's lines.
func freshFromHeader(t *testing.T, ix *Index) (fresh, decoded bool) {
	t.Helper()
	files, err := ix.walk(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.fresh(files), ix.man.files != nil
}

// TestRestoredMtimeEditFound: an edit that keeps a note's size and whose
// mtime a tool set back (a sync tool, an archive restore) is found by the
// next search without a holder, and counted pending by Status (what
// doctor reports), because the inode's change time moved. Windows gives
// no change time: there size and mtime are the whole rule.
func TestRestoredMtimeEditFound(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows gives no inode change time through os.FileInfo (docs/search.md)")
	}
	v := mustVault(t, map[string]string{"a.md": "alpha kumquat", "b.md": "beta words"})
	ctx := context.Background()
	ix := mustOpen(t, v, Options{NoServe: true})
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	p := filepath.Join(v.Root(), "a.md")
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // a change time the old one cannot equal
	if err := os.WriteFile(p, []byte("alpha tangelo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.Stat(p); now.Size() != st.Size() || !now.ModTime().Equal(st.ModTime()) {
		t.Fatalf("the edit did not keep size and mtime: %d %v", now.Size(), now.ModTime())
	}
	// b.md is only touched (its change time moves, its content does not):
	// it is read, not counted, not indexed again.
	if err := os.Chmod(filepath.Join(v.Root(), "b.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	ix = mustOpen(t, v, Options{NoServe: true})
	if st, err := ix.Status(ctx); err != nil || st.Pending != 1 || len(st.PendingPaths) != 1 || st.PendingPaths[0] != "a.md" {
		t.Fatalf("status before the search: %+v %v; want the edit of a.md pending, nothing else", st, err)
	}
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if res := mustSearch(t, ix, Query{Text: "tangelo"}); !has("a.md")(res) {
		t.Errorf("tangelo: %v", paths(res))
	}
	if res := mustSearch(t, ix, Query{Text: "kumquat"}); len(res.Hits) != 0 {
		t.Errorf("kumquat still found: %v", paths(res))
	}
	ix.Close()
	// Both change times are recorded: the next search is proven fresh
	// from the manifest's header.
	ix = mustOpen(t, v, Options{NoServe: true})
	defer ix.Close()
	if fresh, decoded := freshFromHeader(t, ix); !fresh || decoded {
		t.Fatalf("after the sync: fresh=%v, lines decoded=%v", fresh, decoded)
	}
}

// TestManifestVersion2Adopted: an index whose manifest an older Nexus
// wrote (version 2: no change times) is not indexed again; the next sync
// records the change times, writes version 3, and the search after that
// is proven fresh from the header alone.
func TestManifestVersion2Adopted(t *testing.T) {
	v := mustVault(t, map[string]string{"a.md": "alpha kumquat", "노트/배포.md": "배포 완료"})
	ctx := context.Background()
	ix := mustOpen(t, v, Options{NoServe: true})
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	// Write the same manifest as version 2: the CTIME and SUM columns dropped.
	mpath := filepath.Join(v.Root(), filepath.FromSlash(vault.IndexDir), manifestFile)
	data, err := os.ReadFile(mpath)
	if err != nil {
		t.Fatal(err)
	}
	head, body, _ := strings.Cut(string(data), "\n")
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		f := strings.SplitN(l, "\t", 5)
		lines = append(lines, f[0]+"\t"+f[1]+"\t"+f[4])
	}
	oldBody := strings.Join(lines, "\n") + "\n"
	fields := strings.Fields(strings.TrimPrefix(head, manifestMagic))
	for i, kv := range fields {
		if strings.HasPrefix(kv, "crc=") {
			fields[i] = fmt.Sprintf("crc=%08x", crc32.Checksum([]byte(oldBody), castagnoli))
		}
	}
	old := manifestMagicV2 + " " + strings.Join(fields, " ") + "\n" + oldBody
	if err := os.WriteFile(mpath, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := decodeManifest([]byte(old))
	if err != nil || len(m.files) != 2 || m.files["a.md"].Ctime != 0 || m.files["a.md"].Size != int64(len("alpha kumquat")) {
		t.Fatalf("version 2 decoded: %+v %v", m.files, err)
	}

	ix = mustOpen(t, v, Options{NoServe: true})
	docs := func() uint64 {
		bi, _ := ix.local()
		n, err := bi.DocCount()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := docs()
	if st, err := ix.Status(ctx); err != nil || st.Pending != 0 {
		t.Fatalf("status with a version 2 manifest: %+v %v; want nothing pending", st, err)
	}
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if docs() != before {
		t.Errorf("documents %d -> %d: the files were indexed again", before, docs())
	}
	ix.Close()
	data, _ = os.ReadFile(mpath)
	if !strings.HasPrefix(string(data), manifestMagic+" ") {
		t.Fatalf("manifest not written as version 3: %.60q", data)
	}
	ix = mustOpen(t, v, Options{NoServe: true})
	defer ix.Close()
	if fresh, decoded := freshFromHeader(t, ix); !fresh || decoded {
		t.Fatalf("after the upgrade: fresh=%v, lines decoded=%v", fresh, decoded)
	}
	if res := mustSearch(t, ix, Query{Text: "배포"}); !has("노트/배포.md")(res) {
		t.Errorf("배포: %v", paths(res))
	}
}
