package index

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/nexus-memory/nexus/vault"
)

// Start keeps the index current until ctx is done or the Index is closed:
// it first catches up with the files (like [Index.Sync]), then watches
// every folder of the vault (folders created later included) and runs the
// periodic reconcile. If another process holds the index, that process
// keeps it current; Start then only remembers to watch should this
// process take the index over.
func (ix *Index) Start(ctx context.Context) error {
	if ix.isClosed() {
		return ErrClosed
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.startCtx = ctx
	if bi, _ := ix.local(); bi == nil {
		return nil
	}
	if ix.w != nil {
		return nil
	}
	// Watch first, then catch up: a file saved while the first sync walks
	// the vault is queued by the watcher instead of being missed until
	// the next reconcile. The watcher's loop waits for ix.mu, so it
	// handles that queue once the sync is done.
	if err := ix.startWatcher(ctx); err != nil {
		return err
	}
	// Searches meanwhile answer from the index as it is rather than wait
	// for a first sync that can take minutes on a big new vault.
	ix.catchingUp.Store(true)
	err := ix.syncLocked(ctx, nil, nil)
	ix.catchingUp.Store(false)
	// On error the watcher stays: it stops with ctx or Close, and the
	// periodic reconcile retries the sync.
	return err
}

// watcher turns file system events into index updates. ix.mu is held only
// while applying, never while waiting for events.
type watcher struct {
	ix     *Index
	fw     *fsnotify.Watcher
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex           // protects pending
	pending map[string]time.Time // vault-relative path -> when it is due
	kick    chan struct{}        // wakes the loop when pending changed
}

// startWatcher starts watching. ix.mu must be held.
func (ix *Index) startWatcher(ctx context.Context) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch vault: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &watcher{ix: ix, fw: fw, cancel: cancel, pending: map[string]time.Time{}, kick: make(chan struct{}, 1)}
	w.addTree(ix.v.Root())
	ix.w = w
	ix.watching.Store(true)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.loop(ctx)
	}()
	return nil
}

// close stops the loop and waits for it.
func (w *watcher) close() {
	w.cancel()
	w.wg.Wait()
	w.fw.Close()
}

// addTree watches dir and every folder under it, skipping dot-folders.
func (w *watcher) addTree(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if p != w.ix.v.Root() && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if err := w.fw.Add(p); err != nil {
			w.ix.warn(fmt.Sprintf("cannot watch %s (the periodic reconcile covers it): %v", p, err))
		}
		return nil
	})
}

// unwatchTree drops the watches on dir and the folders under it, when
// dir was a watched folder that was renamed or moved away. inotify keeps
// a moved folder's watches, which then report under the old names
// (deep/x.md for what is now deep2/x.md), and fsnotify drops the moved
// folder's own watch when it hears of the move — by then, perhaps, the
// watch addTree set up under the new name, which is the same one. So the
// old watches go first, here, as the rename is heard (fsnotify hands
// events over one at a time, so its own handling of the move comes
// after); the Create under the new name then watches the tree afresh.
func (w *watcher) unwatchTree(dir string) {
	prefix := dir + string(filepath.Separator)
	for _, p := range w.fw.WatchList() {
		if p == dir || strings.HasPrefix(p, prefix) {
			w.fw.Remove(p)
		}
	}
}

// push queues paths; immediate ones are due now, others after the
// debounce (each new event for a path pushes it back).
func (w *watcher) push(rels []string, immediate bool) {
	due := time.Now()
	if !immediate {
		due = due.Add(w.ix.opts.Debounce)
	}
	w.mu.Lock()
	for _, r := range rels {
		w.pending[r] = due
	}
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// drain takes every queued path, due or not.
func (w *watcher) drain() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.pending))
	for r := range w.pending {
		out = append(out, r)
	}
	clear(w.pending)
	return out
}

// due takes the paths that are due.
func (w *watcher) due(now time.Time) (ready []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for r, t := range w.pending {
		if !t.After(now) {
			ready = append(ready, r)
			delete(w.pending, r)
		}
	}
	return ready
}

// next says how long until the next queued path is due (0: one is due
// now; -1: none is queued). It takes nothing from the queue.
func (w *watcher) next(now time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	next := time.Duration(-1)
	for _, t := range w.pending {
		if d := max(t.Sub(now), 0); next < 0 || d < next {
			next = d
		}
	}
	return next
}

func (w *watcher) loop(ctx context.Context) {
	ix := w.ix
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var reconcile <-chan time.Time
	if ix.opts.ReconcileEvery > 0 {
		t := time.NewTicker(ix.opts.ReconcileEvery)
		defer t.Stop()
		reconcile = t.C
	}
	// The manifest (about 75 bytes per file) is saved at most every 10 s
	// while watching; after a crash, files changed since are re-indexed.
	save := time.NewTicker(10 * time.Second)
	defer save.Stop()
	root := ix.v.Root()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			rel, err := filepath.Rel(root, ev.Name)
			if err != nil || strings.HasPrefix(rel, "..") {
				continue
			}
			rel = filepath.ToSlash(rel)
			if isHiddenRel(rel) {
				continue
			}
			if ev.Has(fsnotify.Rename) {
				w.unwatchTree(ev.Name)
			}
			if ev.Has(fsnotify.Create) {
				if st, err := vault.Lstat(ev.Name); err == nil && st.IsDir() {
					// A new or moved-in folder: watch it and index what
					// was written into it before the watch was in place.
					w.addTree(ev.Name)
					w.push([]string{rel}, false)
					continue
				}
			}
			if isNote(rel) || ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				w.push([]string{rel}, false)
			}
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			// Most likely an event queue overflow: catch up by walking.
			ix.warn(fmt.Sprintf("watcher: %v; reconciling", err))
			w.apply(ctx, nil, true)
		case <-w.kick:
		case <-timer.C:
		case <-reconcile:
			w.apply(ctx, nil, true)
		case <-save.C:
			ix.mu.Lock()
			if err := ix.saveManifest(); err != nil {
				ix.warn(err.Error())
			}
			ix.mu.Unlock()
		}
		next := w.applyDue(ctx)
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		if next >= 0 {
			timer.Reset(next)
		} else {
			timer.Reset(time.Hour)
		}
	}
}

// applyDue indexes the paths that are due and returns when the next one
// will be (-1: none). Paths leave the queue only under ix.mu, so a search
// that takes ix.mu either finds a path still queued (and indexes it) or
// already indexed.
func (w *watcher) applyDue(ctx context.Context) time.Duration {
	ix := w.ix
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ready := w.due(time.Now()); len(ready) > 0 {
		if err := ix.update(ctx, ready); err != nil && ctx.Err() == nil {
			ix.warn(fmt.Sprintf("update index: %v", err))
		}
	}
	// Only when the next path is due: one that fell due during the update
	// stays queued (it used to be taken here and dropped).
	return w.next(time.Now())
}

// apply runs a full reconcile: the walk without ix.mu (searches go on),
// then the changes under it.
func (w *watcher) apply(ctx context.Context, paths []string, full bool) {
	ix := w.ix
	files, err := ix.walk(ctx)
	if err != nil {
		if ctx.Err() == nil {
			ix.warn(fmt.Sprintf("scan vault: %v", err))
		}
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if err := ix.syncFiles(ctx, files, nil, nil); err != nil && ctx.Err() == nil {
		ix.warn(fmt.Sprintf("update index: %v", err))
	}
}

// isHiddenRel reports a path with a dot-segment (.obsidian/, .trash/,
// .nexus/, editors' temp files).
func isHiddenRel(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}
