package index

import (
	"context"
	"path/filepath"
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
// a .md file outside every dot-folder, other than the derived timeline of
// the log (its entries are indexed from the feeds themselves).
func isNote(rel string) bool {
	return strings.EqualFold(filepath.Ext(rel), ".md") && !vault.Hidden(rel) && rel != vault.TimelineFile
}

// walk lists every note in the vault with its size and mtime. It never
// enters dot-folders (so never reads .obsidian/) and skips symlinks.
func (ix *Index) walk(ctx context.Context) (map[string]diskFile, error) {
	return walkTree(ctx, ix.v.Root(), "")
}

// walkTree lists the notes under root/sub (sub "" for the whole vault),
// reading folders in parallel: the walk is bound by system calls (one
// lstat per file), not CPU, so several at a time finish sooner.
func walkTree(ctx context.Context, root, sub string) (map[string]diskFile, error) {
	var (
		mu      sync.Mutex
		files   = make(map[string]diskFile, 1024)
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
		abs := root
		if rel != "" {
			abs = filepath.Join(root, filepath.FromSlash(rel))
		}
		notes, dirs, err := readNotesDir(abs)
		local := make([]diskFile, 0, len(notes))
		subdirs := make([]string, 0, len(dirs))
		join := func(name string) string {
			if rel == "" {
				return name
			}
			return rel + "/" + name
		}
		for _, d := range dirs {
			subdirs = append(subdirs, join(d))
		}
		for _, n := range notes {
			r := join(n.name)
			key := r
			if !isASCII(r) {
				key = norm.NFC.String(r)
			}
			if key == vault.TimelineFile {
				continue // derived from the feeds, which are indexed
			}
			local = append(local, diskFile{key: key, disk: r, st: n.st})
		}
		<-sem
		mu.Lock()
		if err != nil && rel == sub {
			rootErr = err
		}
		for _, f := range local {
			files[f.key] = f
		}
		mu.Unlock()
		for _, d := range subdirs {
			pending.Add(1)
			go visit(d)
		}
	}
	pending.Add(1)
	visit(sub)
	pending.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return files, rootErr
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// walkDir is walk limited to one folder.
func (ix *Index) walkDir(ctx context.Context, rel string) (map[string]diskFile, error) {
	return walkTree(ctx, ix.v.Root(), filepath.ToSlash(rel))
}
