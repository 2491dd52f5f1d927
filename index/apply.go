package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/blevesearch/bleve/v2/mapping"
	"hash/crc32"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/document"

	"github.com/nexus-memory/nexus/index/markdown"
	"github.com/nexus-memory/nexus/vault"
)

// diff compares the disk with the manifest: paths to (re)index and paths
// to drop. ix.mu must be held.
func (ix *Index) diff(files map[string]diskFile) (changed []diskFile, gone []string) {
	man := ix.files()
	for k, f := range files {
		old, ok := man[k]
		if !ok || !old.same(f.st, f.diskPath()) {
			changed = append(changed, f)
		}
	}
	for k := range man {
		if _, ok := files[k]; !ok {
			gone = append(gone, k)
		}
	}
	sort.Slice(changed, func(i, j int) bool { return changed[i].key < changed[j].key })
	sort.Strings(gone)
	return changed, gone
}

// changes is [Index.diff] less the files that were only touched: those
// whose size, mtime and on-disk path are as indexed but whose change time
// is not (a chmod, an extended attribute, a copy or restore that kept the
// mtimes) are read, and when their content is what was indexed (its
// CRC-32C) the new change time is recorded instead of indexing them
// again. Change times the manifest lacks are recorded too (see
// [Index.adoptCtimes]). ix.mu must be held.
func (ix *Index) changes(files map[string]diskFile) (changed []diskFile, gone []string) {
	ix.adoptCtimes(files)
	changed, gone = ix.diff(files)
	kept := changed[:0]
	for _, f := range changed {
		if !ix.touchedOnly(f) {
			kept = append(kept, f)
		}
	}
	return kept, gone
}

// adoptCtimes records the change time found on disk for every file the
// index holds as it is but whose change time it did not know (a version 2
// manifest) or knows where the disk gives none: what [fileState.same]
// lets pass, so that the manifest's digest matches the disk's again and
// the next search is proven fresh from the header. ix.mu must be held.
func (ix *Index) adoptCtimes(files map[string]diskFile) {
	for k, f := range files {
		if old, ok := ix.files()[k]; ok && old.Ctime != f.st.Ctime && old.same(f.st, f.diskPath()) {
			old.Ctime = f.st.Ctime
			ix.man.set(k, old)
			ix.dirty = true
		}
	}
}

// touchedOnly reports whether f, which [Index.diff] found changed, holds
// the content the index has of it, and then records its new state.
//
// A read-only index on disk takes size, mtime and path as the rule, as
// before change times counted: such a copy cannot record what it checked,
// so it would read every touched file at every search, and making a vault
// read-only (chmod -R a-w) or copying it with its mtimes (cp -a, rsync -a)
// touches every file.
func (ix *Index) touchedOnly(f diskFile) bool {
	old, ok := ix.files()[f.key]
	if !ok || old.Size != f.st.Size || old.Mtime != f.st.Mtime || old.Disk != f.diskPath() {
		return false
	}
	if ix.ro == roDisk {
		return true
	}
	if !old.Summed || old.Size > ix.opts.MaxFileBytes {
		return false
	}
	data, err := vault.ReadFile(filepath.Join(ix.v.Root(), filepath.FromSlash(f.disk)))
	if err != nil || int64(len(data)) != old.Size || crc32.Checksum(data, castagnoli) != old.Sum {
		return false
	}
	old.Ctime = f.st.Ctime
	ix.man.set(f.key, old)
	ix.dirty = true
	return true
}

// fresh reports whether the files found on disk are exactly those the
// manifest holds, with the same sizes, mtimes and on-disk paths: what
// [Index.diff] would find no change in, decided from the two digests
// without decoding the manifest's lines. ix.mu must be held.
func (ix *Index) fresh(files vaultFiles) bool {
	m := &ix.man
	return (m.files != nil || m.headSum) && !ix.manLost && len(files.list) == m.n && files.sum == m.sum
}

// clearDocs deletes every document from bi. ix.mu must be held.
func (ix *Index) clearDocs(bi bleve.Index) error {
	n, err := bi.DocCount()
	if err != nil || n == 0 {
		return err
	}
	res, err := bi.Search(bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), int(n), 0, false))
	if err != nil {
		return fmt.Errorf("clear index: %w", err)
	}
	batch := bi.NewBatch()
	for _, h := range res.Hits {
		batch.Delete(h.ID)
	}
	if err := bi.Batch(batch); err != nil {
		return fmt.Errorf("clear index: %w", err)
	}
	return nil
}

// parsed is one file read and turned into documents.
type parsed struct {
	f    diskFile
	docs []doc
	skip bool  // unreadable or not text: drop from the index
	from int64 // a log file read from this offset on (see loadLog): its documents before it stay
	// warns are the file's warnings (binary, too big, malformed
	// frontmatter); for a log file read from an offset, those of the new
	// part.
	warns []string
	// analysed are docs mapped and analysed (by a rebuild's prep), which
	// then leaves docs nil.
	analysed []*document.Document
	err      error // from prep
}

// load reads and parses one file. It re-reads until the file is stable
// (same size and mtime before and after reading).
func (ix *Index) load(ctx context.Context, f diskFile) parsed {
	if logKind(f.key) != KindNote {
		return ix.loadLog(ctx, f)
	}
	abs := filepath.Join(ix.v.Root(), filepath.FromSlash(f.disk))
	for attempt := 0; ; attempt++ {
		st1, err := vault.Lstat(abs)
		if err != nil || !st1.Mode().IsRegular() {
			return parsed{f: f, skip: true}
		}
		if st1.Size() > ix.opts.MaxFileBytes {
			f.st = fileState{Size: st1.Size(), Mtime: st1.ModTime().UnixNano(), Ctime: ctimeOf(st1), Disk: f.diskPath()}
			return parsed{f: f, warns: []string{fmt.Sprintf("%d bytes, larger than %d; not indexed", st1.Size(), ix.opts.MaxFileBytes)}}
		}
		data, err := vault.ReadFile(abs)
		if err != nil {
			return parsed{f: f, skip: true}
		}
		st2, err := vault.Lstat(abs)
		if err != nil {
			return parsed{f: f, skip: true}
		}
		if (st2.Size() != st1.Size() || !st2.ModTime().Equal(st1.ModTime()) || int64(len(data)) != st2.Size()) && attempt < 5 {
			time.Sleep(ix.opts.Debounce / 4)
			continue
		}
		f.st = fileState{Size: st2.Size(), Mtime: st2.ModTime().UnixNano(), Ctime: ctimeOf(st2), Sum: crc32.Checksum(data, castagnoli), Summed: true}
		if f.disk != f.key {
			f.st.Disk = f.disk
		}
		head := data
		if len(head) > 8000 {
			head = head[:8000]
		}
		if bytes.IndexByte(head, 0) >= 0 {
			return parsed{f: f, warns: []string{"binary content, not indexed"}}
		}
		if isCanvas(f.key) {
			return parsed{f: f, docs: canvasDocs(f.key, f.disk, data, ix.fallbackDate(f.key, st2.ModTime()))}
		}
		n := markdown.Parse(f.key, data)
		return parsed{f: f, docs: buildDocs(f.key, f.disk, n, ix.fallbackDate(f.key, st2.ModTime())), warns: n.Warnings}
	}
}

// loadAll reads and parses files on every core, then calls prep (if not
// nil) on each, on the same core; the results arrive in no particular
// order. It stops early when ctx is done, and takes no more files once
// stop (which may be nil) is closed: the files it had taken still arrive.
// The caller must drain the channel.
func (ix *Index) loadAll(ctx context.Context, files []diskFile, prep func(*parsed), stop <-chan struct{}) <-chan parsed {
	workers := min(runtime.GOMAXPROCS(0), ix.opts.Workers)
	in := make(chan diskFile)
	out := make(chan parsed, workers*4)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range in {
				if ctx.Err() != nil {
					continue // stopped: drain
				}
				p := ix.load(ctx, f)
				if prep != nil {
					prep(&p)
				}
				out <- p
			}
		}()
	}
	go func() {
		defer close(in)
		for _, f := range files {
			select {
			case <-stop:
				return
			default:
			}
			select {
			case in <- f:
			case <-ctx.Done():
				return
			case <-stop:
				return
			}
		}
	}()
	go func() { wg.Wait(); close(out) }()
	return out
}

// applyStep, when not nil, is called by apply after each file it has
// added to a batch, with the number done (tests stop or cancel there).
var applyStep func(done int)

// errStopped is apply's error when its stop channel closed before every
// file was indexed: what was indexed is committed and in the manifest,
// the rest is left for the next sync.
var errStopped = errors.New("stopped before every file was indexed")

// manChange is one file's change to the manifest, recorded once the
// batch holding its documents (or their deletion) is committed.
type manChange struct {
	key string
	st  fileState
	del bool
}

// pendingBatch is a batch with the manifest changes it commits.
type pendingBatch struct {
	b       *bleve.Batch
	changes []manChange
}

// apply indexes changed files and drops gone ones, in batches. fresh means
// the index is known to hold none of these files (a rebuild), so no old
// documents need deleting. ix.mu must be held.
//
// The manifest records a file only once the batch holding its documents
// (or their deletion) is committed to the index, which bleve has then
// persisted: whenever apply stops (cancelled, failed, stopped, or the
// process killed before the manifest is saved), every file the manifest
// claims is in the index as the manifest says, and the next sync indexes
// the rest. When stop closes, apply reads no more files, commits what it
// has read and returns errStopped.
func (ix *Index) apply(ctx context.Context, bi bleve.Index, changed []diskFile, gone []string, fresh bool, progress func(done, total int), stop <-chan struct{}) error {
	if len(changed)+len(gone) == 0 {
		return nil
	}
	if ix.ro != roNone {
		// An index in memory (a read-only vault) is this process's
		// whole answer: no holder can go on from where it stopped.
		stop = nil
	}
	if ix.ro == roDisk {
		// The read-only index on disk is no longer fresh: index every
		// file in memory instead.
		files, err := ix.walk(ctx)
		if err != nil {
			return fmt.Errorf("scan vault: %w", err)
		}
		if bi, err = ix.toMemory(); err != nil {
			return err
		}
		changed, gone, fresh = make([]diskFile, 0, len(files.list)), nil, true
		for _, f := range files.byKey() {
			changed = append(changed, f)
		}
		sort.Slice(changed, func(i, j int) bool { return changed[i].key < changed[j].key })
	}
	total := len(changed) + len(gone)
	if progress != nil {
		progress(0, total) // there is work: callers may want to know at once
	}
	ix.man.docs = -1 // unknown until the batches are in
	batch := pendingBatch{b: bi.NewBatch()}
	done := 0
	// Batches are applied by one goroutine while the next is prepared, so
	// parsing and indexing overlap.
	// Two appliers: bleve builds one batch's segment on one core while
	// it analyses the other's documents on the other. Each records its
	// batch's files in the manifest once the batch is committed; the
	// main loop below does not touch the manifest meanwhile.
	batches := make(chan pendingBatch, 1)
	batchErr := make(chan error, 2)
	var manMu sync.Mutex
	for range 2 {
		go func() {
			var err error
			for b := range batches {
				// Past cancellation the batches left are dropped (their
				// files stay as the manifest had them): a server asked
				// to stop must not index a big log to its end first.
				if err != nil || ctx.Err() != nil {
					continue
				}
				if e := bi.Batch(b.b); e != nil {
					err = fmt.Errorf("update index: %w", e)
					continue
				}
				manMu.Lock()
				for _, c := range b.changes {
					if c.del {
						ix.man.del(c.key)
					} else {
						ix.man.set(c.key, c.st)
					}
				}
				ix.dirty = true
				manMu.Unlock()
			}
			batchErr <- err
		}()
	}
	flush := func() {
		if batch.b.Size() == 0 && len(batch.changes) == 0 {
			return
		}
		batches <- batch
		batch = pendingBatch{b: bi.NewBatch()}
	}
	finish := func() error {
		close(batches)
		err := errors.Join(<-batchErr, <-batchErr)
		batches = nil
		return err
	}
	defer func() {
		if batches != nil {
			finish()
		}
		if n, err := bi.DocCount(); err == nil {
			ix.man.docs = int(n)
		}
	}()
	for _, k := range gone {
		if err := ix.deleteDocs(bi, batch.b, k); err != nil {
			return err
		}
		ix.fileWarnings(k, nil, false)
		batch.changes = append(batch.changes, manChange{key: k, del: true})
		done++
		if applyStep != nil {
			applyStep(done)
		}
	}
	// A log file is read from where its last indexing ended.
	if !fresh {
		for i := range changed {
			if st, ok := ix.files()[changed[i].key]; ok && st.LogLine > 0 {
				changed[i].prev = &st
			}
		}
	}
	// Documents are analysed where they are parsed, on every core, as a
	// rebuild does (see [analyseFields]): bleve's batch would analyse
	// them again, without the rebuild's shortcuts.
	m := bi.Mapping()
	prep := func(p *parsed) { analyseDocs(ctx, m, p) }
	if bleveAnalyses {
		prep = func(p *parsed) { mapDocs(m, p) }
	}
	out := ix.loadAll(ctx, changed, prep, stop)
	var firstErr error
	docsInBatch := 0
	for p := range out {
		if firstErr != nil || ctx.Err() != nil {
			continue // drain
		}
		if p.err != nil {
			firstErr = p.err
			continue
		}
		if !fresh && (p.from == 0 || p.skip) {
			if err := ix.deleteDocs(bi, batch.b, p.f.key); err != nil {
				firstErr = err
				continue
			}
		}
		ix.fileWarnings(p.f.key, p.warns, p.from > 0 && !p.skip)
		if p.skip {
			batch.changes = append(batch.changes, manChange{key: p.f.key, del: true})
		} else {
			for _, d := range p.analysed {
				if !bleveAnalyses {
					for i, f := range d.Fields {
						d.Fields[i] = analysed{f}
					}
				}
				if err := batch.b.IndexAdvanced(d); err != nil {
					firstErr = fmt.Errorf("index %s: %w", p.f.key, err)
					break
				}
			}
			docsInBatch += len(p.analysed)
			batch.changes = append(batch.changes, manChange{key: p.f.key, st: p.f.st})
		}
		done++
		if applyStep != nil {
			applyStep(done)
		}
		if docsInBatch >= ix.batchDocs() {
			flush()
			docsInBatch = 0
		}
		if progress != nil && (done%500 == 0 || done == total) {
			progress(done, total)
		}
	}
	if firstErr != nil {
		return firstErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	flush()
	if err := finish(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err // batches may have been dropped
	}
	ix.man.LastUpdate = ix.opts.Now().UTC()
	ix.bump()
	if done < total {
		if progress != nil {
			progress(done, total)
		}
		return errStopped
	}
	if progress != nil {
		progress(total, total)
	}
	return nil
}

// bleveAnalyses has a sync leave the analysis to bleve's batch: a test's
// reference for [analyseFields].
var bleveAnalyses = false

// mapDocs maps p's documents into p.analysed, for bleve to analyse.
func mapDocs(m mapping.IndexMapping, p *parsed) {
	for i := range p.docs {
		d, err := mapDoc(m, &p.docs[i])
		if err != nil {
			p.err = fmt.Errorf("index %s: %w", p.f.key, err)
			return
		}
		p.analysed = append(p.analysed, d)
	}
	p.docs = nil
}

// DefaultMemoryBudget is Options.MemoryBudget's default: 256 MiB, which
// keeps a rebuild of 10,000 notes near 250 MB resident (see
// docs/benchmarks.md).
const DefaultMemoryBudget = 256 << 20

// batchDocBytes is the budget per document of a batch: a document in
// flight (analysed fields, term frequencies, its part of the segment being
// built) costs about 100 KiB, and up to four batches are in flight (one
// filling, one queued, one per applier), plus the heap's headroom.
// Measured on generated vaults with heap profiles.
const batchDocBytes = 512 << 10

// batchDocs is the number of documents per index batch for the budget:
// at 5,000 per batch a rebuild of 10,000 notes peaked near 3 GB.
func (ix *Index) batchDocs() int {
	return int(min(max(ix.opts.MemoryBudget/batchDocBytes, 50), 5000))
}

// buildBatchDocs is the number of documents per segment of a rebuild
// (see [segmentWriter]): half of batchDocs, so that a rebuild's batches
// in flight (one filling, up to four being written) stay within what
// batchDocs allows a sync. Under the heap's cap a
// rebuild's smaller batches cost less collection than they add in merging:
// at 10k notes −6 % CPU for the same wall time, at 100k −5 % CPU and a
// fifth less anonymous memory (docs/benchmarks.md, session 5).
func (ix *Index) buildBatchDocs() int {
	return max(ix.batchDocs()/2, 50)
}

// deleteDocs adds deletes for every document of path key to batch.
func (ix *Index) deleteDocs(bi bleve.Index, batch *bleve.Batch, key string) error {
	q := bleve.NewTermQuery(key)
	q.SetField("path")
	req := bleve.NewSearchRequestOptions(q, 100000, 0, false)
	res, err := bi.Search(req)
	if err != nil {
		return fmt.Errorf("find old documents of %s: %w", key, err)
	}
	for _, h := range res.Hits {
		batch.Delete(h.ID)
	}
	return nil
}
