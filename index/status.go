package index

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"

	"time"

	"github.com/nexus-memory/nexus/vault"
)

// Status describes the index, for "nexus index status" and the doctor.
type Status struct {
	// Dir is the index folder, vault-relative.
	Dir string `json:"dir"`
	// Documents is the number of search documents (notes, sections, log
	// entries, decisions); Files the number of markdown files indexed.
	Documents uint64 `json:"documents"`
	Files     int    `json:"files"`
	// SizeBytes is the index's size on disk.
	SizeBytes int64 `json:"size_bytes"`
	// LastUpdate is when the index last changed.
	LastUpdate time.Time `json:"last_update,omitzero"`
	// Pending counts files changed on disk (new, edited, deleted) that the
	// index does not reflect yet; PendingPaths names up to 20 of them.
	Pending      int      `json:"pending"`
	PendingPaths []string `json:"pending_paths,omitempty"`
	// Watching is true when the holder keeps the index current.
	Watching bool `json:"watching"`
	// HolderPID is the process holding the index; Remote is true when that
	// is another process.
	HolderPID int  `json:"holder_pid"`
	Remote    bool `json:"remote"`
	// Rebuilding is true while a rebuild, or the first catch-up of a
	// watcher, runs; Files and Pending are then not counted.
	Rebuilding bool `json:"rebuilding,omitempty"`
	// ReadOnly is "disk" when the vault cannot be written and the index on
	// disk is used as it is (it is fresh), "memory" when it was built in
	// memory for this process instead; "" normally.
	ReadOnly string `json:"read_only,omitempty"`
	// FileWarnings are what indexing found odd about files (binary, too
	// big, malformed frontmatter), kept with the index until the file
	// changes or goes; Warnings other recent warnings of this process or
	// the holder (the watcher, a damaged index).
	FileWarnings []FileWarning `json:"file_warnings,omitempty"`
	Warnings     []string      `json:"warnings,omitempty"`
}

// Status reports the index's size and freshness. It walks the vault
// (sizes, mtimes and change times; it reads only files whose change time
// alone moved) to count pending changes, so it is cheap enough for a
// health check but not free on a huge vault.
func (ix *Index) Status(ctx context.Context) (Status, error) {
	if ix.isClosed() {
		return Status{}, ErrClosed
	}
	if st, remote, err := viaHolder(ctx, ix, func(c *client) (Status, error) {
		st, err := c.status(ctx)
		st.Remote = !isConnErr(err)
		return st, err
	}); remote {
		return st, err
	}
	st := Status{Dir: ".nexus/index", HolderPID: os.Getpid(), Warnings: ix.Warnings()}
	ix.bmu.RLock()
	if ix.bi != nil {
		st.Documents, _ = ix.bi.DocCount()
	}
	ix.bmu.RUnlock()
	if ix.rebuilding.Load() || ix.catchingUp.Load() {
		st.Rebuilding = true
		return st, nil
	}
	files, err := ix.walk(ctx)
	if err != nil {
		return st, err
	}
	ix.mu.Lock()
	st.Watching = ix.w != nil
	switch ix.ro {
	case roDisk:
		st.ReadOnly = "disk"
	case roMemory:
		st.ReadOnly = "memory"
	}
	st.Files = ix.man.n
	st.FileWarnings = ix.fileWarningList()
	st.LastUpdate = ix.man.LastUpdate
	var changed []diskFile
	var gone []string
	if !ix.fresh(files) {
		changed, gone = ix.changes(files.byKey())
		st.Files = len(ix.files())
	}
	ix.mu.Unlock()
	st.Pending = len(changed) + len(gone)
	for _, f := range changed {
		if len(st.PendingPaths) == 20 {
			break
		}
		st.PendingPaths = append(st.PendingPaths, f.key)
	}
	for _, g := range gone {
		if len(st.PendingPaths) == 20 {
			break
		}
		st.PendingPaths = append(st.PendingPaths, g)
	}
	filepath.WalkDir(filepath.Join(ix.dir, bleveSubdir), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				st.SizeBytes += info.Size()
			}
		}
		return nil
	})
	return st, nil
}

// Built reports whether the vault has a search index (a first search or
// 'nexus index rebuild' builds it), without opening it.
func Built(v *vault.Vault) bool {
	_, err := vault.Stat(filepath.Join(v.MustPath(vault.IndexDir), manifestFile))
	return err == nil
}
