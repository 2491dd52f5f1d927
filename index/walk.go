package index

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/vault"
)

// diskFile is a markdown file found on disk.
type diskFile struct {
	key  string // NFC vault-relative slash path
	disk string // on-disk vault-relative slash path
	st   fileState
	prev *fileState // what the manifest held, for a log file (see loadLog)
}

// isNote reports whether a vault-relative path is a note the index covers:
// a .md or .canvas file outside every dot-folder, other than the derived timeline of
// the log (its entries are indexed from the feeds themselves).
func isNote(rel string) bool {
	ext := filepath.Ext(rel)
	return (strings.EqualFold(ext, ".md") || strings.EqualFold(ext, ".canvas")) && !vault.Hidden(rel) && rel != vault.TimelineFile
}

// diskPath is f's on-disk path when it differs from its key, else "" (as
// the manifest keeps it).
func (f diskFile) diskPath() string {
	if f.disk == f.key {
		return ""
	}
	return f.disk
}

// vaultFiles is what a walk found: every note with its size and mtime, in
// no order, and their digest (see [fileDigest]).
type vaultFiles struct {
	list []diskFile
	sum  digest
}

// byKey indexes the files by key. Of two files with one key (a name in
// NFC and in NFD side by side, possible on Linux) the one named in NFC
// is kept, else the first in the list (see [vaultFiles.shadowed]).
func (vf vaultFiles) byKey() map[string]diskFile {
	m := make(map[string]diskFile, len(vf.list))
	for _, f := range vf.list {
		if old, ok := m[f.key]; !ok || f.disk == f.key && old.disk != old.key {
			m[f.key] = f
		}
	}
	return m
}

// shadowed lists the files byKey left out for another of the same key.
func (vf vaultFiles) shadowed(kept map[string]diskFile) []diskFile {
	if len(kept) == len(vf.list) {
		return nil
	}
	var out []diskFile
	for _, f := range vf.list {
		if kept[f.key].disk != f.disk {
			out = append(out, f)
		}
	}
	return out
}

// warnShadowed records, on the kept file, a warning for each file left
// out because its name is the kept one's in another Unicode form: the
// index has one document set per name, as Obsidian on macOS sees one
// file. ix.mu must be held.
func (ix *Index) warnShadowed(files vaultFiles, kept map[string]diskFile) {
	for _, f := range files.shadowed(kept) {
		ix.fileWarnings(f.key, []string{fmt.Sprintf("%q is another file with the same name in another Unicode form (NFC/NFD); only %q is indexed: rename one of them", f.disk, kept[f.key].disk)}, true)
	}
}

// walk lists every note in the vault with its size and mtime. It never
// enters dot-folders (so never reads .obsidian/) and skips symlinks.
func (ix *Index) walk(ctx context.Context) (vaultFiles, error) {
	vf, err := walkTree(ctx, ix.v.Root(), "", int(ix.walkHint.Load()))
	if err == nil {
		ix.walkHint.Store(int64(len(vf.list)))
	}
	return vf, err
}

// walkScratch is one folder's listing, reused from folder to folder.
type walkScratch struct {
	notes []dirNote
	dirs  []string
	local []diskFile
}

var walkScratches = sync.Pool{New: func() any { return new(walkScratch) }}

// walkTree lists the notes under root/sub (sub "" for the whole vault),
// reading folders in parallel: the walk is bound by system calls (one
// stat per file), not CPU, so several at a time finish sooner. hint is
// about how many notes there are (0: unknown).
func walkTree(ctx context.Context, root, sub string, hint int) (vaultFiles, error) {
	var (
		mu      sync.Mutex
		files   = vaultFiles{list: make([]diskFile, 0, max(hint+hint/8, 64))}
		pending sync.WaitGroup
		sem     = make(chan struct{}, 8)
		rootErr error
	)
	var visit func(rel string)
	visit = func(rel string) {
		defer pending.Done()
		if ctx.Err() != nil {
			return
		}
		sem <- struct{}{}
		abs, prefix := root, ""
		if rel != "" {
			abs, prefix = filepath.Join(root, filepath.FromSlash(rel)), rel+"/"
		}
		sc := walkScratches.Get().(*walkScratch)
		var err error
		sc.notes, sc.dirs, err = readNotesDir(abs, prefix, sc.notes[:0], sc.dirs[:0])
		subdirs := slices.Clone(sc.dirs)
		var sum digest
		sc.local = sc.local[:0]
		for _, n := range sc.notes {
			r := n.name
			key := r
			if !isASCII(r) {
				key = norm.NFC.String(r)
			}
			if key == vault.TimelineFile {
				continue // derived from the feeds, which are indexed
			}
			f := diskFile{key: key, disk: r, st: n.st}
			sum.add(fileDigest(key, f.diskPath(), n.st.Size, n.st.Mtime, n.st.Ctime))
			sc.local = append(sc.local, f)
		}
		<-sem
		mu.Lock()
		if err != nil && rel == sub {
			rootErr = err
		}
		files.list = append(files.list, sc.local...)
		files.sum.add(sum)
		mu.Unlock()
		clear(sc.local) // drop the strings
		walkScratches.Put(sc)
		for _, d := range subdirs {
			pending.Add(1)
			go visit(d)
		}
	}
	pending.Add(1)
	visit(sub)
	pending.Wait()
	if err := ctx.Err(); err != nil {
		return vaultFiles{}, err
	}
	return files, rootErr
}

// walkDir is walk limited to one folder.
func (ix *Index) walkDir(ctx context.Context, rel string) (vaultFiles, error) {
	return walkTree(ctx, ix.v.Root(), filepath.ToSlash(rel), 0)
}
