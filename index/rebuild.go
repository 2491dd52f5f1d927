package index

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
)

// Progress reports how far a rebuild is.
type Progress struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

// Rebuild recreates the index from the markdown alone. Searches keep
// answering from the old index until the new one is complete.
func (ix *Index) Rebuild(ctx context.Context, progress func(Progress)) error {
	if ix.isClosed() {
		return ErrClosed
	}
	if c := ix.remoteOrTakeover(); c != nil {
		err := c.rebuild(ctx, progress)
		if !isConnErr(err) {
			return err
		}
		if ix.takeover() {
			return ix.Rebuild(ctx, progress)
		}
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.ro != roNone {
		return ErrReadOnly
	}
	ix.rebuilding.Store(true)
	defer ix.rebuilding.Store(false)
	newDir := filepath.Join(ix.dir, bleveSubdir+".new")
	os.RemoveAll(newDir)
	nbi, err := newBleve(newDir, nil)
	if err != nil {
		return fmt.Errorf("create index: %w", err)
	}
	files, err := ix.walk(ctx)
	if err != nil {
		nbi.Close()
		os.RemoveAll(newDir)
		return fmt.Errorf("scan vault: %w", err)
	}
	list := make([]diskFile, 0, len(files.list))
	for _, f := range files.byKey() {
		list = append(list, f)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].key < list[j].key })
	oldMan, oldWarn := ix.man, ix.fwarn
	ix.man = newManifest()
	ix.fwarn, ix.fwarnDirty = nil, true
	var pf func(done, total int)
	if progress != nil {
		pf = func(done, total int) { progress(Progress{Done: done, Total: total}) }
		progress(Progress{Done: 0, Total: len(list)})
	}
	if err := ix.apply(ctx, nbi, list, nil, true, pf); err != nil {
		nbi.Close()
		os.RemoveAll(newDir)
		ix.man, ix.fwarn = oldMan, oldWarn
		return err
	}
	if len(list) == 0 {
		ix.man.LastUpdate = ix.opts.Now().UTC()
		ix.bump()
	}
	// Let the merges a long-lived holder would do run now: a rebuild
	// leaves many segments, and every short-lived process that opened
	// the index (a cold 'nexus search') would otherwise start merging them
	// and be cut off when it exits, doing that work again and again.
	settle(ctx, nbi)
	// Swap: close both, move the new one in place, reopen.
	if err := nbi.Close(); err != nil {
		return fmt.Errorf("close new index: %w", err)
	}
	unlock, err := ix.v.Lock("search-index-open") // no other process may open it mid-swap
	if err != nil {
		return fmt.Errorf("swap index: %w", err)
	}
	defer unlock()
	ix.bmu.Lock()
	defer ix.bmu.Unlock()
	bdir := filepath.Join(ix.dir, bleveSubdir)
	oldDir := filepath.Join(ix.dir, bleveSubdir+".old")
	if ix.bi != nil {
		ix.bi.Close()
		ix.bi = nil
	}
	os.RemoveAll(oldDir)
	if err := os.Rename(bdir, oldDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("swap index: %w", err)
	}
	if err := os.Rename(newDir, bdir); err != nil {
		return fmt.Errorf("swap index: %w", err)
	}
	os.RemoveAll(oldDir)
	bi, err := bleve.OpenUsing(bdir, map[string]any{"bolt_timeout": ix.opts.OpenTimeout.String()})
	if err != nil {
		return fmt.Errorf("reopen index: %w", err)
	}
	ix.bi = bi
	ix.dirty = true
	return ix.saveManifest()
}

// settle runs scorch's merges by its ordinary merge plan until there is
// nothing left to merge (not into one segment: that would need memory in
// proportion to the whole index).
func settle(ctx context.Context, bi bleve.Index) {
	adv, err := bi.Advanced()
	if err != nil {
		return
	}
	if sc, ok := adv.(*scorch.Scorch); ok {
		opts := mergeplan.DefaultMergePlanOptions
		sc.ForceMerge(ctx, &opts)
	}
}
