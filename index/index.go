package index

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/nexus-memory/nexus/index/holder"
	"github.com/nexus-memory/nexus/vault"
)

// schemaVersion changes whenever the mapping, the document model or the
// terms text analysis makes do; an index of another version is rebuilt on
// open. (11: words are folded: no invisible code points, NFC, ' for ’,
// ligatures as letters. 12: Latin and Greek accents removed
// from terms; Thai, Lao, Khmer and Myanmar read in pairs of letters.
// 13: a tag is composed before it is lower-cased, so a decomposed İ is i;
// a heading of several lines is one; words split at apostrophes; a body
// over maxPairedBody indexed without pairs, in longbody.
// 14: one document per note, a long note's sections as spans; the file
// name is an alias; names for "the query is its name".
// 15: a daily note dated by its file name; .canvas files indexed.)
const schemaVersion = 15

const (
	bleveSubdir  = "bleve"
	manifestFile = "manifest"
	serveFile    = holder.ServeFile
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
	// MemoryBudget is about how much memory indexing many files at once
	// (a rebuild, a first sync) may use, in bytes: it sizes the batches of
	// analysed documents in flight, which is where indexing's memory goes.
	// Smaller is slower (more, smaller segments to merge). Default
	// DefaultMemoryBudget. The caller may also bound the process's heap
	// with debug.SetMemoryLimit (nexus index rebuild --memory does).
	MemoryBudget int64
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
	// Workers caps how many files a build or a catch-up reads, parses
	// and analyses at once (and so how many cores it takes). Default (0):
	// one per core, runtime.GOMAXPROCS. A server sets fewer to leave a
	// core to the calls it answers while it indexes. Never more than
	// GOMAXPROCS.
	Workers int
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
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.MemoryBudget <= 0 {
		o.MemoryBudget = DefaultMemoryBudget
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 32 << 20
	}
	if o.OpenTimeout <= 0 {
		o.OpenTimeout = 300 * time.Millisecond
	}
}

// Index is an open search index: either held by this process (local) or
// held by another process and reached over loopback (remote). All methods
// are safe for concurrent use. Searches run concurrently; changes to the
// index are serialised.
type Index struct {
	v    *vault.Vault
	opts Options
	dir  string // .nexus/index

	dailyOnce sync.Once
	daily     *dailyFormat // see daily.go; read on first use

	// mu serialises changes to the index (apply, rebuild, mode switches)
	// and protects man.
	mu    sync.Mutex
	man   manifest
	dirty bool // man not yet saved
	// manLost: the manifest's lines did not decode (see [Index.files]),
	// so the index's documents are of unknown files: the next sync
	// deletes them all and indexes every file.
	manLost bool
	ro      int // roNone, roDisk or roMemory (readonly.go)

	fwarn      map[string][]string // warnings about indexed files, by key (warnings.go)
	fwarnDirty bool                // fwarn not yet saved

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
	partial    atomic.Bool // a sync stopped early (see [Index.SyncFor]) and none completed since
	watching   atomic.Bool // w is set

	warnMu   sync.Mutex // protects warnings
	warnings []string

	w        *watcher        // nil unless Start was called (and this process holds the index)
	startCtx context.Context // Start's ctx, to start watching after a takeover
	srv      *server         // nil when remote or NoServe

	walkHint  atomic.Int64 // notes found by the last walk (or in the manifest): sizes the next
	logParsed atomic.Int64 // bytes of log files read and parsed (the part after the last indexed block), for tests

	lastAsked atomic.Int64 // unix nanoseconds of the last request served to another process
	yieldOnce sync.Once
	yielded   chan struct{} // closed when another process asks a Yield holder to step down

	closeOnce sync.Once
	closed    chan struct{}
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

// local returns the bleve index, or nil if the index is remote.
func (ix *Index) local() (bleve.Index, *client) {
	ix.bmu.RLock()
	defer ix.bmu.RUnlock()
	return ix.bi, ix.remote
}
