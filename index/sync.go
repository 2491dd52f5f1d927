package index

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/vault"
)

// Sync brings the index up to date with the files on disk: it indexes what
// is queued and walks the vault for changes (size and mtime), and returns
// when they are all in the index.
func (ix *Index) Sync(ctx context.Context) error {
	return ix.SyncProgress(ctx, nil)
}

// SyncProgress is [Index.Sync] that reports progress while it indexes
// (locally; a holder reports none): first Done 0 as soon as it knows
// there are files to index, then every few hundred files and at the end.
// It does not call progress when nothing changed.
func (ix *Index) SyncProgress(ctx context.Context, progress func(Progress)) error {
	if ix.isClosed() {
		return ErrClosed
	}
	if _, remote, err := viaHolder(ctx, ix, func(c *client) (struct{}, error) {
		return struct{}{}, c.sync(ctx)
	}); remote {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.syncLocked(ctx, progressFunc(progress), nil)
}

// SyncFor is [Index.SyncProgress] that indexes for about budget, then
// stops: it reads no more files, commits those it has read (they are
// searchable, and recorded in the manifest, so the next sync or holder
// goes on from there) and returns false. It returns true when the index
// is up to date. Files are taken newest first, so what a stopped sync
// leaves searchable is what was written last. Searches of this Index
// say CatchingUp until a sync completes. A holder, which keeps the
// index current itself, is asked to sync in full.
func (ix *Index) SyncFor(ctx context.Context, budget time.Duration, progress func(Progress)) (bool, error) {
	if ix.isClosed() {
		return false, ErrClosed
	}
	if _, remote, err := viaHolder(ctx, ix, func(c *client) (struct{}, error) {
		return struct{}{}, c.sync(ctx)
	}); remote {
		return err == nil, err
	}
	stop := make(chan struct{})
	t := time.AfterFunc(budget, func() { close(stop) })
	defer t.Stop()
	return ix.syncUntil(ctx, progress, stop)
}

// syncUntil is [Index.SyncFor] stopped when stop closes.
func (ix *Index) syncUntil(ctx context.Context, progress func(Progress), stop <-chan struct{}) (bool, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	err := ix.syncLocked(ctx, progressFunc(progress), stop)
	if errors.Is(err, errStopped) {
		return false, nil
	}
	return err == nil, err
}

// setPartial records whether the index is known to lack files because a
// sync stopped early: in the manifest, for the next process, and for
// this one's searches, which then say CatchingUp. ix.mu must be held.
func (ix *Index) setPartial(p bool) {
	if ix.man.partial != p {
		ix.man.partial, ix.dirty = p, true
	}
	ix.partial.Store(p)
}

func progressFunc(progress func(Progress)) func(done, total int) {
	if progress == nil {
		return nil
	}
	return func(done, total int) { progress(Progress{Done: done, Total: total}) }
}

// syncLocked walks the vault and indexes what changed. A stop that
// closes (nil: never) ends it early with errStopped (see [Index.apply]).
func (ix *Index) syncLocked(ctx context.Context, progress func(done, total int), stop <-chan struct{}) error {
	files, err := ix.walk(ctx)
	if err != nil {
		return fmt.Errorf("scan vault: %w", err)
	}
	return ix.syncFiles(ctx, files, progress, stop)
}

// syncFiles is syncLocked with the walk done (possibly before ix.mu was
// taken, so files may be slightly older than the manifest). ix.mu must be
// held.
func (ix *Index) syncFiles(ctx context.Context, files vaultFiles, progress func(done, total int), stop <-chan struct{}) error {
	bi, _ := ix.local()
	if bi == nil {
		return ErrClosed
	}
	if ix.w != nil {
		if queued := ix.w.drain(); len(queued) > 0 {
			if err := ix.update(ctx, queued); err != nil {
				return err
			}
		}
	}
	if ix.fresh(files) {
		ix.setPartial(false)
		return ix.saveManifest()
	}
	if ix.files(); ix.manLost {
		if err := ix.clearDocs(bi); err != nil {
			return err
		}
		ix.manLost = false
	}
	kept := files.byKey()
	changed, all := ix.changes(kept)
	// A file created after the walk is not gone: check before dropping.
	// One replaced by a symlink or a folder is, as the walk skips those.
	gone := all[:0]
	for _, k := range all {
		if st, err := vault.Lstat(filepath.Join(ix.v.Root(), filepath.FromSlash(k))); err != nil || !st.Mode().IsRegular() {
			gone = append(gone, k)
		}
	}
	if stop != nil {
		// What a stopped sync leaves searchable: the newest notes.
		sort.SliceStable(changed, func(i, j int) bool { return changed[i].st.Mtime > changed[j].st.Mtime })
	}
	if err := ix.apply(ctx, bi, changed, gone, false, progress, stop); err != nil {
		if errors.Is(err, errStopped) {
			ix.setPartial(true)
		}
		// The manifest holds what was committed (see [Index.apply]):
		// saved, the next sync goes on from there.
		if serr := ix.saveManifest(); serr != nil && errors.Is(err, errStopped) {
			return serr
		}
		return err
	}
	ix.setPartial(false)
	ix.warnShadowed(files, kept) // after apply, which replaces the kept file's warnings
	return ix.saveManifest()
}

// update indexes the given vault-relative paths (files or folders) as they
// are now on disk: changed, new, or gone. ix.mu must be held.
func (ix *Index) update(ctx context.Context, rels []string) error {
	bi, _ := ix.local()
	if bi == nil {
		return ErrClosed
	}
	var changed []diskFile
	var gone []string
	seen := map[string]bool{}
	root := ix.v.Root()
	for _, rel := range rels {
		key := norm.NFC.String(rel)
		if seen[key] || vault.Hidden(key) {
			continue
		}
		seen[key] = true
		abs := filepath.Join(root, filepath.FromSlash(rel))
		st, err := vault.Lstat(abs)
		switch {
		case err != nil:
			// Gone: the file, or a folder and everything under it.
			prefix := key + "/"
			for k := range ix.files() {
				if k == key || strings.HasPrefix(k, prefix) {
					gone = append(gone, k)
				}
			}
		case st.IsDir():
			// A new or moved-in folder: index what is in it, and drop
			// what the index thinks is in it but is not.
			walked, _ := ix.walkDir(ctx, rel)
			sub := walked.byKey()
			prefix := key + "/"
			for k, f := range sub {
				if old, ok := ix.files()[k]; !ok || !old.same(f.st, f.diskPath()) {
					changed = append(changed, f)
				}
			}
			for k := range ix.files() {
				if strings.HasPrefix(k, prefix) {
					if _, ok := sub[k]; !ok {
						gone = append(gone, k)
					}
				}
			}
		case st.Mode().IsRegular() && isNote(key):
			changed = append(changed, diskFile{key: key, disk: filepath.ToSlash(rel)})
		default:
			if _, ok := ix.files()[key]; ok {
				gone = append(gone, key)
			}
		}
	}
	return ix.apply(ctx, bi, changed, gone, false, nil, nil)
}

// Notify tells the index that Nexus just wrote, moved or deleted these
// vault-relative paths, so they are indexed at once instead of after the
// watcher's debounce or the next reconcile. When the index is not being
// watched (no [Index.Start]) the paths are indexed before Notify returns.
// Errors are logged, not returned: the reconcile will catch up.
func (ix *Index) Notify(paths ...string) {
	if ix.isClosed() || len(paths) == 0 {
		return
	}
	var clean []string
	for _, p := range paths {
		if c, err := vault.CleanRel(p); err == nil {
			clean = append(clean, c)
		}
	}
	if c := ix.remoteOrTakeover(); c != nil {
		if err := c.notify(context.Background(), clean); err != nil {
			ix.opts.Logger.Warn("search index: notify holder", "err", err)
		}
		return
	}
	ix.mu.Lock()
	if w := ix.w; w != nil {
		ix.mu.Unlock()
		w.push(clean, true)
		return
	}
	defer ix.mu.Unlock()
	if err := ix.update(context.Background(), clean); err != nil {
		ix.opts.Logger.Warn("search index: update", "err", err)
	}
	_ = ix.saveManifest()
}
