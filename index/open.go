package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/blevesearch/bleve/v2"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/nexus-memory/nexus/vault"
)

// Open opens the vault's search index, creating an empty one if there is
// none (call [Index.Sync] or [Index.Start] to fill it). If another process
// holds the index, the returned Index forwards calls to it.
func Open(v *vault.Vault, opts Options) (*Index, error) {
	opts.defaults()
	ix := &Index{v: v, opts: opts, dir: filepath.Join(v.Root(), filepath.FromSlash(vault.IndexDir)), closed: make(chan struct{}), yielded: make(chan struct{})}
	ix.ver.ch = make(chan struct{})
	if err := vault.MkdirAll(ix.dir, 0o755); err != nil {
		if !readOnlyErr(err) {
			return nil, fmt.Errorf("open index: %w", err)
		}
		// A read-only vault with no index folder: nobody can hold one.
		ix.mu.Lock()
		defer ix.mu.Unlock()
		if err := ix.openReadOnly(); err != nil {
			return nil, fmt.Errorf("open index: %w", err)
		}
		return ix, nil
	}
	// A running holder answers at once; asking it first spares waiting
	// for the lock to time out. A background holder of another version
	// of Nexus is asked to step down; the loop below then takes over.
	if c, err := dialHolder(ix.dir); err == nil {
		if c.Info().Version == holderVersion || !c.Info().Yields {
			ix.remote = c
			return ix, nil
		}
		c.yield(context.Background())
		c.close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := ix.openLocal()
		if err == nil {
			return ix, nil
		}
		if !isLocked(err) {
			return nil, err
		}
		c, cerr := dialHolder(ix.dir)
		if cerr == nil && (c.Info().Version == holderVersion || !c.Info().Yields) {
			ix.remote = c
			return ix, nil
		}
		if cerr == nil {
			c.close() // stepping down: wait for its lock
			cerr = errors.New("the index holder is stepping down")
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("open index: %w (%v)", ErrBusy, cerr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkDocs reports an index with no documents whose manifest lists files
// as damaged: bleve opens a segment zeroed, cut short or emptied (a disk
// error, a sync tool's half copy) without a word, and the index would
// then answer every search with nothing while its manifest says it is
// fresh. (Damage that leaves documents is found when a search trips on
// it; see [unpanic].)
func checkDocs(bi bleve.Index, man manifest) error {
	files := man.n // the header's count, good when headSum is set
	if man.files != nil {
		files = len(man.files)
	} else if !man.headSum {
		return nil
	}
	if files == 0 || man.docs == 0 {
		return nil // nothing to miss: no files, or files that gave no document (binary, too big)
	}
	n, err := bi.DocCount()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: no documents, though %d files were indexed", ErrDamaged, files)
	}
	return nil
}

// isLocked reports whether err is bbolt's lock timeout: another process
// holds the index open. bleve returns bbolt's error unwrapped.
func isLocked(err error) bool {
	return errors.Is(err, bolterrors.ErrTimeout)
}

// writable reports whether a file can be created in dir.
func writable(dir string) bool {
	f, err := os.CreateTemp(dir, ".nexus-probe-*")
	if err != nil {
		return false
	}
	f.Close()
	vault.Remove(f.Name())
	return true
}

// openLocal opens (or creates) the bleve index and takes it over.
func (ix *Index) openLocal() error {
	// Opening, and above all creating or replacing a damaged index, is
	// serialised across processes: without it one process could remove
	// the index another has just created and holds.
	unlock, err := ix.v.Lock("search-index-open")
	if err != nil && readOnlyErr(err) {
		return ix.openReadOnly()
	}
	if err != nil {
		return fmt.Errorf("open index: %w", err)
	}
	defer unlock()
	// A rebuild killed in its swap is finished first: with the open lock
	// held, a manifest.new is never that of a rebuild still running.
	if err := finishSwap(ix.dir); err != nil && !readOnlyErr(err) {
		ix.warn(fmt.Sprintf("finishing an interrupted rebuild: %v", err))
	}
	bdir := filepath.Join(ix.dir, bleveSubdir)
	man := ix.loadManifest()
	rc := map[string]any{"bolt_timeout": ix.opts.OpenTimeout.String()}
	bi, err := openBleve(bdir, rc)
	if err == nil && man.Schema == schemaVersion {
		if err = checkDocs(bi, man); err != nil {
			bi.Close()
		}
	}
	if err == nil {
		// This process holds the index now: no rebuild of another one is
		// running, so what a killed one left can go.
		removeLeftovers(ix.dir)
	}
	if err == nil && man.Schema != schemaVersion {
		// An old or unknown index: start afresh.
		bi.Close()
		if err := vault.RemoveAll(bdir); err != nil {
			return fmt.Errorf("remove old index: %w", err)
		}
		bi, err = nil, bleve.ErrorIndexPathDoesNotExist
	}
	if err != nil {
		if isLocked(err) {
			return err
		}
		if readOnlyErr(err) || !writable(ix.dir) {
			// Not damaged: this process may not write it.
			return ix.openReadOnly()
		}
		if !errors.Is(err, bleve.ErrorIndexPathDoesNotExist) && !errors.Is(err, bleve.ErrorIndexMetaMissing) {
			// A damaged index is derived state: rebuild it.
			ix.warn(fmt.Sprintf("index unreadable, recreating: %v", err))
		}
		vault.RemoveAll(bdir)
		bi, err = newBleve(bdir, rc)
		if err != nil {
			return fmt.Errorf("create index: %w", err)
		}
		man = newManifest()
		ix.dirty = true
		vault.Remove(filepath.Join(ix.dir, "manifest.json")) // the format before schema 6
	}
	if !man.headSum {
		ix.dirty = true // a manifest of an older Nexus: write it with its digest
	}
	ix.man = man
	ix.partial.Store(man.partial)
	ix.walkHint.Store(int64(man.n))
	ix.loadWarnings()
	ix.lastAsked.Store(time.Now().UnixNano())
	ix.bmu.Lock()
	ix.bi = bi
	old := ix.remote
	ix.remote = nil
	ix.bmu.Unlock()
	if old != nil {
		old.close()
	}
	if !ix.opts.NoServe {
		srv, err := startServer(ix)
		if err != nil {
			ix.opts.Logger.Warn("search index: cannot answer other processes", "err", err)
		} else {
			ix.srv = srv
		}
	}
	return nil
}
