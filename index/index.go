package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	bolterrors "go.etcd.io/bbolt/errors"
	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/internal/markdown"
	"github.com/nexus-memory/nexus/vault"
)

// schemaVersion changes whenever the mapping or the document model does;
// an index of another version is rebuilt on open.
const schemaVersion = 6

const (
	bleveSubdir  = "bleve"
	manifestFile = "manifest"
	serveFile    = "serve.json"
)

// Options tune an [Index]. The zero value is usable.
type Options struct {
	// Logger receives warnings about odd files (skipped binaries, malformed
	// frontmatter). Default: discard.
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Debounce is how long a file must be quiet after a change before it is
	// indexed. Default 100ms.
	Debounce time.Duration
	// ReconcileEvery is the period of the size+mtime walk that catches
	// changes the watcher missed. Default 1 minute; negative disables it.
	ReconcileEvery time.Duration
	// MaxFileBytes is the largest note indexed; bigger ones are skipped
	// with a warning. Default 32 MiB.
	MaxFileBytes int64
	// NoServe keeps the holder from answering other processes.
	NoServe bool
	// OpenTimeout bounds how long Open waits for the index file lock before
	// deciding another process holds it. Default 300ms.
	OpenTimeout time.Duration
	// Yield makes this process, when it holds the index, step down when
	// another Nexus process asks (see [Index.Yielded]): the background
	// holder 'nexus search' starts gives way to 'nexus watch' or
	// 'nexus serve', and to a newer Nexus.
	Yield bool
	// WaitCatchUp makes searches wait for [Index.Start]'s first sync
	// instead of answering from the index as it was. For a holder whose
	// index was synced moments ago, so the wait is short and no answer is
	// stale.
	WaitCatchUp bool
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Debounce <= 0 {
		o.Debounce = 100 * time.Millisecond
	}
	if o.ReconcileEvery == 0 {
		o.ReconcileEvery = time.Minute
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 32 << 20
	}
	if o.OpenTimeout <= 0 {
		o.OpenTimeout = 300 * time.Millisecond
	}
}

// fileState is what the index knows about one indexed file.
type fileState struct {
	Size  int64  // bytes
	Mtime int64  // unix nanoseconds
	Disk  string // on-disk relative path when it differs from the NFC key
}

type manifest struct {
	Schema     int
	LastUpdate time.Time
	Files      map[string]fileState
}

// Index is an open search index: either held by this process (local) or
// held by another process and reached over loopback (remote). All methods
// are safe for concurrent use. Searches run concurrently; changes to the
// index are serialised.
type Index struct {
	v    *vault.Vault
	opts Options
	dir  string // .nexus/index

	// mu serialises changes to the index (apply, rebuild, mode switches)
	// and protects man.
	mu    sync.Mutex
	man   manifest
	dirty bool // man not yet saved

	// bmu protects bi and remote, swapped by Rebuild and takeover.
	bmu    sync.RWMutex
	bi     bleve.Index
	remote *client

	ver struct { // bumped after every committed change
		sync.Mutex
		n  uint64
		ch chan struct{}
	}

	rebuilding atomic.Bool // a Rebuild runs: searches do not wait for ix.mu
	catchingUp atomic.Bool // Start's first sync runs: searches do not wait for ix.mu
	watching   atomic.Bool // w is set

	warnMu   sync.Mutex // protects warnings
	warnings []string

	w        *watcher        // nil unless Start was called (and this process holds the index)
	startCtx context.Context // Start's ctx, to start watching after a takeover
	srv      *server         // nil when remote or NoServe

	lastAsked atomic.Int64 // unix nanoseconds of the last request served to another process
	yieldOnce sync.Once
	yielded   chan struct{} // closed when another process asks a Yield holder to step down

	closeOnce sync.Once
	closed    chan struct{}
}

// Open opens the vault's search index, creating an empty one if there is
// none (call [Index.Sync] or [Index.Start] to fill it). If another process
// holds the index, the returned Index forwards calls to it.
func Open(v *vault.Vault, opts Options) (*Index, error) {
	opts.defaults()
	ix := &Index{v: v, opts: opts, dir: filepath.Join(v.Root(), filepath.FromSlash(vault.IndexDir)), closed: make(chan struct{}), yielded: make(chan struct{})}
	ix.ver.ch = make(chan struct{})
	if err := os.MkdirAll(ix.dir, 0o755); err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	// A running holder answers at once; asking it first spares waiting
	// for the lock to time out. A background holder of another version
	// of Nexus is asked to step down; the loop below then takes over.
	if c, err := dialHolder(ix.dir); err == nil {
		if c.info.Version == holderVersion || !c.info.Yields {
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
		if cerr == nil && (c.info.Version == holderVersion || !c.info.Yields) {
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

// isLocked reports whether err is bbolt's lock timeout: another process
// holds the index open. bleve returns bbolt's error unwrapped.
func isLocked(err error) bool {
	return errors.Is(err, bolterrors.ErrTimeout)
}

// openLocal opens (or creates) the bleve index and takes it over.
func (ix *Index) openLocal() error {
	// Opening, and above all creating or replacing a damaged index, is
	// serialised across processes: without it one process could remove
	// the index another has just created and holds.
	unlock, err := ix.v.Lock("search-index-open")
	if err != nil {
		return fmt.Errorf("open index: %w", err)
	}
	defer unlock()
	bdir := filepath.Join(ix.dir, bleveSubdir)
	man := ix.loadManifest()
	rc := map[string]any{"bolt_timeout": ix.opts.OpenTimeout.String()}
	bi, err := bleve.OpenUsing(bdir, rc)
	if err == nil && man.Schema != schemaVersion {
		// An old or unknown index: start afresh.
		bi.Close()
		if err := os.RemoveAll(bdir); err != nil {
			return fmt.Errorf("remove old index: %w", err)
		}
		bi, err = nil, bleve.ErrorIndexPathDoesNotExist
	}
	if err != nil {
		if isLocked(err) {
			return err
		}
		if !errors.Is(err, bleve.ErrorIndexPathDoesNotExist) && !errors.Is(err, bleve.ErrorIndexMetaMissing) {
			// A damaged index is derived state: rebuild it.
			ix.warn(fmt.Sprintf("index unreadable, recreating: %v", err))
		}
		os.RemoveAll(bdir)
		bi, err = newBleve(bdir, rc)
		if err != nil {
			return fmt.Errorf("create index: %w", err)
		}
		man = manifest{Schema: schemaVersion, Files: map[string]fileState{}}
		ix.dirty = true
		os.Remove(filepath.Join(ix.dir, "manifest.json")) // the format before schema 6
	}
	ix.man = man
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

func newBleve(dir string, rc map[string]any) (bleve.Index, error) {
	m, err := newMapping()
	if err != nil {
		return nil, err
	}
	return bleve.NewUsing(dir, m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, rc)
}

func newMapping() (*mapping.IndexMappingImpl, error) {
	m := bleve.NewIndexMapping()
	if err := addAnalyzer(m); err != nil {
		return nil, err
	}
	m.ScoringModel = scoringModel
	m.DefaultAnalyzer = analyzerName
	dm := bleve.NewDocumentStaticMapping()
	text := func(store bool) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = analyzerName
		f.Store = store
		f.IncludeInAll = false
		f.IncludeTermVectors = true
		f.DocValues = false
		return f
	}
	kw := func(store bool) *mapping.FieldMapping {
		f := bleve.NewKeywordFieldMapping()
		f.Store = store
		f.IncludeInAll = false
		f.IncludeTermVectors = false
		f.DocValues = false
		return f
	}
	num := bleve.NewNumericFieldMapping()
	num.IncludeInAll = false
	num.Index = false
	num.DocValues = false
	date := bleve.NewDateTimeFieldMapping()
	date.IncludeInAll = false
	date.Store = true
	date.DocValues = false
	dm.AddFieldMappingsAt("title", text(true))
	dm.AddFieldMappingsAt("aliases", text(false))
	dm.AddFieldMappingsAt("heading", kw(true))
	dm.AddFieldMappingsAt("headings", text(false))
	dm.AddFieldMappingsAt("tagtext", text(false))
	body := text(false)
	body.Analyzer = bodyAnalyzerName
	body.IncludeTermVectors = false // phrases are matched through word pairs
	dm.AddFieldMappingsAt("body", body)
	all := text(false)
	all.IncludeTermVectors = false
	dm.AddFieldMappingsAt("all", all)
	dm.AddSubDocumentMapping("_all", bleve.NewDocumentDisabledMapping())
	dm.AddFieldMappingsAt("tag", kw(false))
	dm.AddFieldMappingsAt("path", kw(true))
	dm.AddFieldMappingsAt("agent", kw(true))
	dm.AddFieldMappingsAt("type", kw(true))
	dm.AddFieldMappingsAt("kind", kw(true))
	dm.AddFieldMappingsAt("line", num)
	dm.AddFieldMappingsAt("end", num)
	dm.AddFieldMappingsAt("date", date)
	m.DefaultMapping = dm
	m.DefaultField = "body"
	return m, nil
}

// loadManifest reads the manifest; a missing or unreadable one is empty
// (schema 0), which makes Open rebuild the index.
func (ix *Index) loadManifest() manifest {
	data, err := os.ReadFile(filepath.Join(ix.dir, manifestFile))
	if err != nil {
		return manifest{Files: map[string]fileState{}}
	}
	m, err := decodeManifest(data)
	if err != nil {
		return manifest{Files: map[string]fileState{}}
	}
	return m
}

// saveManifest writes the manifest if it changed. ix.mu must be held.
func (ix *Index) saveManifest() error {
	if !ix.dirty {
		return nil
	}
	data := encodeManifest(ix.man)
	if err := vault.WriteFile(filepath.Join(ix.dir, manifestFile), data, 0o644); err != nil {
		return fmt.Errorf("save index manifest: %w", err)
	}
	ix.dirty = false
	return nil
}

// Close stops watching and serving, saves the index's state and closes it.
// It waits for its goroutines to finish.
func (ix *Index) Close() error {
	var err error
	ix.closeOnce.Do(func() {
		close(ix.closed)
		if ix.w != nil {
			ix.w.close()
		}
		if ix.srv != nil {
			ix.srv.close()
		}
		ix.mu.Lock()
		defer ix.mu.Unlock()
		ix.bmu.Lock()
		defer ix.bmu.Unlock()
		if ix.bi != nil {
			err = ix.saveManifest()
			if cerr := ix.bi.Close(); err == nil {
				err = cerr
			}
			ix.bi = nil
		}
		if ix.remote != nil {
			ix.remote.close()
		}
	})
	return err
}

func (ix *Index) isClosed() bool {
	select {
	case <-ix.closed:
		return true
	default:
		return false
	}
}

// Remote reports whether another process holds the index and this Index
// forwards calls to it.
func (ix *Index) Remote() bool {
	ix.bmu.RLock()
	defer ix.bmu.RUnlock()
	return ix.remote != nil
}

// Version counts the changes committed to the index since it was opened.
func (ix *Index) Version() uint64 {
	ix.ver.Lock()
	defer ix.ver.Unlock()
	return ix.ver.n
}

// Wait blocks until the index's version is greater than after (some
// change was committed after that version was read) and returns the new
// version. Use it to wait for the watcher without sleeping:
//
//	v := ix.Version()
//	for !found() { v, err = ix.Wait(ctx, v) }
func (ix *Index) Wait(ctx context.Context, after uint64) (uint64, error) {
	for {
		ix.ver.Lock()
		n, ch := ix.ver.n, ix.ver.ch
		ix.ver.Unlock()
		if n > after {
			return n, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return n, ctx.Err()
		case <-ix.closed:
			return n, ErrClosed
		}
	}
}

func (ix *Index) bump() {
	ix.ver.Lock()
	ix.ver.n++
	close(ix.ver.ch)
	ix.ver.ch = make(chan struct{})
	ix.ver.Unlock()
}

func (ix *Index) warn(msg string) {
	ix.opts.Logger.Warn("search index: " + msg)
	ix.warnMu.Lock()
	defer ix.warnMu.Unlock()
	ix.warnings = append(ix.warnings, msg)
	if len(ix.warnings) > 100 {
		ix.warnings = ix.warnings[len(ix.warnings)-100:]
	}
}

// Warnings returns the most recent warnings about odd files (at most 100).
func (ix *Index) Warnings() []string {
	ix.warnMu.Lock()
	defer ix.warnMu.Unlock()
	return append([]string(nil), ix.warnings...)
}

// diskFile is a markdown file found on disk.
type diskFile struct {
	key  string // NFC vault-relative slash path
	disk string // on-disk vault-relative slash path
	st   fileState
}

// isNote reports whether a vault-relative path is a note the index covers:
// a .md file outside every dot-folder.
func isNote(rel string) bool {
	return strings.EqualFold(filepath.Ext(rel), ".md") && !vault.Hidden(rel)
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

// diff compares the disk with the manifest: paths to (re)index and paths
// to drop. ix.mu must be held.
func (ix *Index) diff(files map[string]diskFile) (changed []diskFile, gone []string) {
	for k, f := range files {
		old, ok := ix.man.Files[k]
		if !ok || old.Size != f.st.Size || old.Mtime != f.st.Mtime {
			changed = append(changed, f)
		}
	}
	for k := range ix.man.Files {
		if _, ok := files[k]; !ok {
			gone = append(gone, k)
		}
	}
	sort.Slice(changed, func(i, j int) bool { return changed[i].key < changed[j].key })
	sort.Strings(gone)
	return changed, gone
}

// parsed is one file read and turned into documents.
type parsed struct {
	f    diskFile
	docs []doc
	skip bool // unreadable or not text: drop from the index
}

// load reads and parses one file. It re-reads until the file is stable
// (same size and mtime before and after reading).
func (ix *Index) load(f diskFile) parsed {
	abs := filepath.Join(ix.v.Root(), filepath.FromSlash(f.disk))
	for attempt := 0; ; attempt++ {
		st1, err := os.Lstat(abs)
		if err != nil || !st1.Mode().IsRegular() {
			return parsed{f: f, skip: true}
		}
		if st1.Size() > ix.opts.MaxFileBytes {
			ix.warn(fmt.Sprintf("%s: %d bytes, larger than %d; not indexed", f.key, st1.Size(), ix.opts.MaxFileBytes))
			f.st = fileState{Size: st1.Size(), Mtime: st1.ModTime().UnixNano(), Disk: f.st.Disk}
			return parsed{f: f}
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			return parsed{f: f, skip: true}
		}
		st2, err := os.Lstat(abs)
		if err != nil {
			return parsed{f: f, skip: true}
		}
		if (st2.Size() != st1.Size() || !st2.ModTime().Equal(st1.ModTime()) || int64(len(data)) != st2.Size()) && attempt < 5 {
			time.Sleep(ix.opts.Debounce / 4)
			continue
		}
		f.st = fileState{Size: st2.Size(), Mtime: st2.ModTime().UnixNano()}
		if f.disk != f.key {
			f.st.Disk = f.disk
		}
		head := data
		if len(head) > 8000 {
			head = head[:8000]
		}
		if bytes.IndexByte(head, 0) >= 0 {
			ix.warn(fmt.Sprintf("%s: binary content, not indexed", f.key))
			return parsed{f: f}
		}
		n := markdown.Parse(f.key, data)
		for _, w := range n.Warnings {
			ix.warn(f.key + ": " + w)
		}
		return parsed{f: f, docs: buildDocs(f.key, n, st2.ModTime())}
	}
}

// apply indexes changed files and drops gone ones, in batches. fresh means
// the index is known to hold none of these files (a rebuild), so no old
// documents need deleting. ix.mu must be held.
func (ix *Index) apply(ctx context.Context, bi bleve.Index, changed []diskFile, gone []string, fresh bool, progress func(done, total int)) error {
	total := len(changed) + len(gone)
	if total == 0 {
		return nil
	}
	batch := bi.NewBatch()
	done := 0
	// Batches are applied by one goroutine while the next is prepared, so
	// parsing and indexing overlap.
	// Two appliers: bleve builds one batch's segment on one core while
	// it analyses the other's documents on the other.
	batches := make(chan *bleve.Batch, 1)
	batchErr := make(chan error, 2)
	for range 2 {
		go func() {
			var err error
			for b := range batches {
				if err == nil {
					if e := bi.Batch(b); e != nil {
						err = fmt.Errorf("update index: %w", e)
					}
				}
			}
			batchErr <- err
		}()
	}
	flush := func() error {
		if batch.Size() == 0 {
			return nil
		}
		batches <- batch
		batch = bi.NewBatch()
		return nil
	}
	finish := func() error {
		close(batches)
		return errors.Join(<-batchErr, <-batchErr)
	}
	defer func() {
		if batches != nil {
			finish()
		}
	}()
	for _, k := range gone {
		if err := ix.deleteDocs(bi, batch, k); err != nil {
			return err
		}
		delete(ix.man.Files, k)
		ix.dirty = true
		done++
	}
	// Parse in parallel, index in order.
	workers := runtime.GOMAXPROCS(0)
	in := make(chan diskFile)
	out := make(chan parsed, workers*4)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range in {
				out <- ix.load(f)
			}
		}()
	}
	go func() {
		defer close(in)
		for _, f := range changed {
			select {
			case in <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(out) }()
	var firstErr error
	docsInBatch := 0
	// On failure the manifest must not claim files whose documents never
	// reached the index: forget them, so the next sync indexes them again.
	var touched []string
	defer func() {
		if firstErr != nil || ctx.Err() != nil {
			for _, k := range touched {
				delete(ix.man.Files, k)
			}
		}
	}()
	for p := range out {
		if firstErr != nil {
			continue // drain
		}
		if !fresh {
			if err := ix.deleteDocs(bi, batch, p.f.key); err != nil {
				firstErr = err
				continue
			}
		}
		if p.skip {
			delete(ix.man.Files, p.f.key)
		} else {
			for i := range p.docs {
				if err := batch.Index(p.docs[i].id(), &p.docs[i]); err != nil {
					firstErr = fmt.Errorf("index %s: %w", p.f.key, err)
					break
				}
			}
			docsInBatch += len(p.docs)
			ix.man.Files[p.f.key] = p.f.st
		}
		touched = append(touched, p.f.key)
		ix.dirty = true
		done++
		if docsInBatch >= batchDocs {
			if err := flush(); err != nil {
				firstErr = err
			}
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
	firstErr = finish()
	batches = nil
	if firstErr != nil {
		return firstErr
	}
	if progress != nil {
		progress(total, total)
	}
	ix.man.LastUpdate = ix.opts.Now().UTC()
	ix.bump()
	return nil
}

// batchDocs is the number of documents per index batch.
const batchDocs = 5000

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

// local returns the bleve index, or nil if the index is remote.
func (ix *Index) local() (bleve.Index, *client) {
	ix.bmu.RLock()
	defer ix.bmu.RUnlock()
	return ix.bi, ix.remote
}

// Sync brings the index up to date with the files on disk: it indexes what
// is queued and walks the vault for changes (size and mtime), and returns
// when they are all in the index.
func (ix *Index) Sync(ctx context.Context) error {
	return ix.SyncProgress(ctx, nil)
}

// SyncProgress is [Index.Sync] that reports progress while it indexes
// (locally; a holder reports none).
func (ix *Index) SyncProgress(ctx context.Context, progress func(Progress)) error {
	if ix.isClosed() {
		return ErrClosed
	}
	if c := ix.remoteOrTakeover(); c != nil {
		err := c.sync(ctx)
		if !isConnErr(err) {
			return err
		}
		if ix.takeover() {
			return ix.SyncProgress(ctx, progress)
		}
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var pf func(done, total int)
	if progress != nil {
		pf = func(done, total int) { progress(Progress{Done: done, Total: total}) }
	}
	return ix.syncLocked(ctx, pf)
}

func (ix *Index) syncLocked(ctx context.Context, progress func(done, total int)) error {
	files, err := ix.walk(ctx)
	if err != nil {
		return fmt.Errorf("scan vault: %w", err)
	}
	return ix.syncFiles(ctx, files, progress)
}

// syncFiles is syncLocked with the walk done (possibly before ix.mu was
// taken, so files may be slightly older than the manifest). ix.mu must be
// held.
func (ix *Index) syncFiles(ctx context.Context, files map[string]diskFile, progress func(done, total int)) error {
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
	changed, all := ix.diff(files)
	// A file created after the walk is not gone: check before dropping.
	gone := all[:0]
	for _, k := range all {
		if _, err := os.Lstat(filepath.Join(ix.v.Root(), filepath.FromSlash(k))); err != nil {
			gone = append(gone, k)
		}
	}
	if err := ix.apply(ctx, bi, changed, gone, false, progress); err != nil {
		return err
	}
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
		st, err := os.Lstat(abs)
		switch {
		case err != nil:
			// Gone: the file, or a folder and everything under it.
			prefix := key + "/"
			for k := range ix.man.Files {
				if k == key || strings.HasPrefix(k, prefix) {
					gone = append(gone, k)
				}
			}
		case st.IsDir():
			// A new or moved-in folder: index what is in it, and drop
			// what the index thinks is in it but is not.
			sub, _ := ix.walkDir(ctx, rel)
			prefix := key + "/"
			for k, f := range sub {
				if old, ok := ix.man.Files[k]; !ok || old.Size != f.st.Size || old.Mtime != f.st.Mtime {
					changed = append(changed, f)
				}
			}
			for k := range ix.man.Files {
				if strings.HasPrefix(k, prefix) {
					if _, ok := sub[k]; !ok {
						gone = append(gone, k)
					}
				}
			}
		case st.Mode().IsRegular() && isNote(key):
			changed = append(changed, diskFile{key: key, disk: filepath.ToSlash(rel)})
		default:
			if _, ok := ix.man.Files[key]; ok {
				gone = append(gone, key)
			}
		}
	}
	return ix.apply(ctx, bi, changed, gone, false, nil)
}

// walkDir is walk limited to one folder.
func (ix *Index) walkDir(ctx context.Context, rel string) (map[string]diskFile, error) {
	return walkTree(ctx, ix.v.Root(), filepath.ToSlash(rel))
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
	list := make([]diskFile, 0, len(files))
	for _, f := range files {
		list = append(list, f)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].key < list[j].key })
	oldMan := ix.man
	ix.man = manifest{Schema: schemaVersion, Files: map[string]fileState{}}
	var pf func(done, total int)
	if progress != nil {
		pf = func(done, total int) { progress(Progress{Done: done, Total: total}) }
		progress(Progress{Done: 0, Total: len(list)})
	}
	if err := ix.apply(ctx, nbi, list, nil, true, pf); err != nil {
		nbi.Close()
		os.RemoveAll(newDir)
		ix.man = oldMan
		return err
	}
	if len(list) == 0 {
		ix.man.LastUpdate = ix.opts.Now().UTC()
		ix.bump()
	}
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

// scoringModel: bleve's BM25 computes the average field length per
// segment in a way that punishes long notes heavily, so the classic
// tf-idf with length norm is used ("" = bleve's default).
var scoringModel = ""
