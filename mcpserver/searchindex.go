package mcpserver

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/nexus-memory/nexus/index"
)

// keepIndex opens the vault's search index and keeps it current (its own
// watcher; or, when another process holds it, through that process) until
// ctx is done. Opening is retried, so a search index that is busy at
// startup becomes available later.
func (s *Server) keepIndex(ctx context.Context) {
	for delay := 100 * time.Millisecond; ; delay = min(delay*2, 10*time.Second) {
		ix, err := s.openIndex()
		if err == nil {
			if err := ix.Start(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("search index watcher", "err", err)
			}
			return
		}
		s.log.Warn("open search index; will retry", "err", err, "in", delay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

// openIndex returns the search index, opening it on first use.
func (s *Server) openIndex() (*index.Index, error) {
	s.ixMu.Lock()
	defer s.ixMu.Unlock()
	if s.ix != nil {
		return s.ix, nil
	}
	if s.ctx.Err() != nil {
		return nil, ErrShuttingDown
	}
	// The build and catch-ups leave a core to the calls (issue 33: a
	// log_read answers at once while the hub indexes a big log).
	workers := max(runtime.GOMAXPROCS(0)-1, 1)
	ix, err := index.Open(s.v, index.Options{Logger: s.log, Now: s.now, MemoryBudget: s.opts.MemoryBudget / 4, Workers: workers})
	if err != nil {
		return nil, err
	}
	if ix.Remote() {
		// A background holder left by 'nexus search' gives way: this
		// server then holds the index itself (its next call takes over).
		ix.AskHolderToYield(s.ctx)
	}
	s.ix = ix
	return ix, nil
}

// searchIndex returns the index for a search.
func (s *Server) searchIndex() (*index.Index, error) {
	ix, err := s.openIndex()
	if err != nil {
		return nil, fmt.Errorf("search index unavailable (%v); retry in a moment, or use memory_get on a known path", err)
	}
	return ix, nil
}
