package index

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/blevesearch/bleve/v2"
)

// A vault whose .nexus/ cannot be written (a read-only mount, a copy
// owned by another user, the docs' suggested mirror) is still searchable.
// Open then uses the index on disk read-only, as long as it is fresh: the
// same size+mtime check as always finds no file changed. When it is not
// fresh, or there is none, the index is built in memory from the files
// for this process (and kept current in memory after that): nothing is
// ever written. See docs/search.md, "Read-only vaults".

// Read-only modes of an Index (Index.ro).
const (
	roNone   = iota // the index on disk, held for writing
	roDisk          // the index on disk, opened read-only; fresh so far
	roMemory        // built in memory: the vault cannot be written
)

// readOnlyErr reports whether err says the file system refused a write
// (permissions or a read-only mount).
func readOnlyErr(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// ReadOnly reports whether the index could not be opened for writing (the
// vault's .nexus/ is read-only): searches are answered from the index on
// disk while it is fresh, else from one built in memory.
func (ix *Index) ReadOnly() bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.ro != roNone
}

// InMemory reports whether the index was built in memory because the
// vault cannot be written and its index on disk was missing or stale.
func (ix *Index) InMemory() bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.ro == roMemory
}

// openReadOnly opens the index on disk read-only if it is of this schema,
// else an empty index in memory (the sync that follows fills it).
func (ix *Index) openReadOnly() error {
	man := ix.loadManifest()
	var bi bleve.Index
	ro := roMemory
	if man.Schema == schemaVersion {
		var err error
		bi, err = openBleve(filepath.Join(ix.dir, bleveSubdir), map[string]any{"read_only": true, "bolt_timeout": ix.opts.OpenTimeout.String()})
		if err == nil {
			if err = checkDocs(bi, man); err != nil {
				bi.Close()
			}
		}
		switch {
		case err == nil:
			ro = roDisk
		case isLocked(err):
			return err // a holder has it: ask the holder
		default:
			ix.opts.Logger.Warn("search index: cannot read the index on disk; building one in memory", "err", err)
		}
	}
	if ro == roMemory {
		var err error
		if bi, err = newBleve("", nil); err != nil {
			return fmt.Errorf("create index in memory: %w", err)
		}
		man = newManifest()
	}
	ix.man, ix.ro = man, ro
	if ro == roDisk {
		ix.loadWarnings()
	}
	ix.bmu.Lock()
	ix.bi = bi
	ix.bmu.Unlock()
	return nil
}

// toMemory replaces a read-only index on disk that is no longer fresh by
// an empty one in memory; the caller indexes every file into it. ix.mu
// must be held.
func (ix *Index) toMemory() (bleve.Index, error) {
	nbi, err := newBleve("", nil)
	if err != nil {
		return nil, fmt.Errorf("create index in memory: %w", err)
	}
	ix.bmu.Lock()
	old := ix.bi
	ix.bi = nbi
	ix.bmu.Unlock()
	if old != nil {
		old.Close()
	}
	ix.man = newManifest()
	ix.fwarn = nil
	ix.ro = roMemory
	ix.opts.Logger.Info("search index: the vault is read-only and its index is not fresh; built in memory")
	return nbi, nil
}
