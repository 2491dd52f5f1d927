package mcpserver

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// unreadCache remembers each agent's unread count until the live log or
// the agent's cursor changes: counting on every tool result would re-read
// the cursor and the log's tail each time.
type unreadCache struct {
	// version is bumped when the log changes (an append through this
	// server at once; by another process when the log watcher sees it)
	// and when a cursor moves through this server.
	version atomic.Uint64

	mu      sync.Mutex // protects byAgent and counting
	byAgent map[string]unreadCount
	// counting holds, by agent, a channel closed when the count under way
	// for that agent is done (and stored in byAgent).
	counting map[string]chan struct{}
}

// noticeWait is how long a tool result waits for an unread count that is
// not known yet. Counting is incremental, so it is quick once done for an
// agent; but the first count of an agent without a cursor parses the
// whole log (seconds for a million entries), and no call may wait for
// that: the result goes out without the notice and the count finishes in
// the background for the calls after it.
const noticeWait = 250 * time.Millisecond

// noticeSmallLog is the size of a live log under which a call waits for
// the count however long it takes (a busy machine, not a big log): such a
// count parses at most a few MB.
const noticeSmallLog = 4 << 20

type unreadCount struct {
	version uint64
	total   int
	by      map[string]int
}

// invalidate marks every cached count stale.
func (c *unreadCache) invalidate() { c.version.Add(1) }

// unreadNotice returns the line appended to every tool result of an agent
// with unread live-log entries ("3 new log entries from ella — call
// log_read"), or "".
// A failure here never spoils the result it would be appended to.
// It also returns the counts behind the line.
func (s *Server) unreadNotice(agent string) (got unreadCount, notice string) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("count unread log entries panicked", "agent", agent, "panic", r)
			notice = ""
		}
	}()
	got, ok := s.unreadCounts(agent)
	if !ok || got.total == 0 {
		return got, ""
	}
	return got, formatNotice(got.total, got.by)
}

// unreadCount returns how many entries are unread for agent (0 when that
// cannot be told).
func (s *Server) unreadCount(agent string) int {
	got, _ := s.unreadCounts(agent)
	return got.total
}

// unreadCounts returns agent's unread counts, from the cache when the log
// and cursors have not changed since they were counted.
// On a log of noticeSmallLog bytes or more, a count not done within
// noticeWait (at once for the agent's first count) goes on in the
// background; the answer is then false.
func (s *Server) unreadCounts(agent string) (unreadCount, bool) {
	c := &s.unread
	ver := c.version.Load()
	c.mu.Lock()
	got, ok := c.byAgent[agent]
	if ok && got.version == ver {
		c.mu.Unlock()
		return got, true
	}
	done, running := c.counting[agent]
	if !running {
		if !s.startBackground() {
			c.mu.Unlock()
			return unreadCount{}, false
		}
		done = make(chan struct{})
		if c.counting == nil {
			c.counting = map[string]chan struct{}{}
		}
		c.counting[agent] = done
		go func() {
			defer s.background.Done()
			s.countUnread(agent, ver, done)
		}()
	}
	c.mu.Unlock()
	if n, err := s.lg.LiveBytes(); err == nil && n < s.smallLog {
		<-done
	} else if !ok {
		// The agent's first count on a big log parses everything it has
		// not read (the whole log, without a cursor): no call waits for
		// it, not even noticeWait (a hub's first append on a 200,000-entry
		// log answered 250 ms later for nothing).
		return unreadCount{}, false
	} else {
		t := time.NewTimer(noticeWait)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			s.log.Debug("unread count still under way; answering without the notice", "agent", agent)
			return unreadCount{}, false
		}
	}
	c.mu.Lock()
	got, ok = c.byAgent[agent]
	c.mu.Unlock()
	return got, ok
}

// countUnread counts agent's unread entries as of version ver, stores the
// count and closes done.
func (s *Server) countUnread(agent string, ver uint64, done chan struct{}) {
	c := &s.unread
	total, by, err := s.count(agent)
	c.mu.Lock()
	defer c.mu.Unlock()
	defer close(done)
	delete(c.counting, agent)
	if err != nil {
		s.log.Debug("count unread log entries", "agent", agent, "err", err)
		delete(c.byAgent, agent)
		return
	}
	if c.byAgent == nil {
		c.byAgent = map[string]unreadCount{}
	}
	c.byAgent[agent] = unreadCount{version: ver, total: total, by: by}
}

func formatNotice(total int, by map[string]int) string {
	authors := make([]string, 0, len(by))
	for a := range by {
		authors = append(authors, a)
	}
	sort.Slice(authors, func(i, j int) bool {
		if by[authors[i]] != by[authors[j]] {
			return by[authors[i]] > by[authors[j]]
		}
		return authors[i] < authors[j]
	})
	name := func(a string) string {
		if a == "" {
			return "a person (typed by hand)"
		}
		return a
	}
	var from string
	if len(authors) == 1 {
		from = name(authors[0])
	} else {
		parts := make([]string, len(authors))
		for i, a := range authors {
			parts[i] = fmt.Sprintf("%s (%d)", name(a), by[a])
		}
		from = strings.Join(parts, ", ")
	}
	noun := "entries"
	if total == 1 {
		noun = "entry"
	}
	return fmt.Sprintf("%d new log %s from %s — call log_read", total, noun, from)
}
