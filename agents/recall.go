package agents

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// Recall signals: which facts and bounded-memory entries agents actually
// use. They are machine-local (under .nexus/state/recall/, never in a note a
// person reads) and cheap: recording appends one line to an in-process
// buffer; a flush appends the buffer to events.log under a cross-process
// lock, so any number of processes can record at once without losing a
// count. Reading the signals ([LoadRecall]) folds the log into
// summary.json.

// RecallDir holds the recall log and its summary.
const RecallDir = vault.StateDir + "/recall"

// Kinds of recall event.
const (
	// RecallStart is a session-start render of an agent: its memory index
	// (every fact listed) and its MEMORY.md/USER.md entries were shown.
	RecallStart = "start"
	// RecallRead is a read of one file: fact_read, memory_get, 'nexus fact
	// read'. When the reader had just found the file with a search, the
	// read counts as a search hit read with that query.
	RecallRead = "read"
	// RecallHits is a search and the paths it returned.
	RecallHits = "hits"
)

// RecallEvent is one recall signal.
type RecallEvent struct {
	Time time.Time `json:"-"`
	// Agent is who recalled (the reader, not necessarily the owner).
	Agent string `json:"a"`
	Kind  string `json:"k"`
	// Path is the vault-relative file read (RecallRead).
	Path string `json:"p,omitempty"`
	// Entries are the ids ([EntryID]) of the bounded-memory entries a read
	// of MEMORY.md or USER.md returned.
	Entries []string `json:"e,omitempty"`
	// Query and Hits are a search and the paths it returned (RecallHits).
	Query string   `json:"q,omitempty"`
	Hits  []string `json:"h,omitempty"`
	// From and To are the 1-based lines a read of a log file returned
	// (To 0: to the end); a search hit PATH#LINE ([LogHit]) inside them
	// counts as a read of that log entry.
	From int `json:"f,omitempty"`
	To   int `json:"l,omitempty"`
	// Via is the face that recorded it: "mcp" or "cli".
	Via string `json:"v,omitempty"`
	// Millis is Time in Unix milliseconds, as stored.
	Millis int64 `json:"t"`
}

// searchWindow is how long after a search a read of one of its hits
// counts as that search's hit being read.
const searchWindow = 30 * time.Minute

// Recorder buffers one process's recall events for one vault and appends
// them to the vault's recall log. It is safe for concurrent use.
type Recorder struct {
	v   *vault.Vault
	dir string

	mu      sync.Mutex
	buf     []byte
	timer   *time.Timer
	off     bool
	lastErr error
}

// flushAfter is how long a recorded event waits in the buffer at most;
// flushBytes flushes at once beyond that size.
const (
	flushAfter = time.Second
	flushBytes = 64 << 10
)

var recorders sync.Map // vault root -> *Recorder

// Recall returns this process's recorder for v (one per vault folder).
func Recall(v *vault.Vault) *Recorder {
	if r, ok := recorders.Load(v.Root()); ok {
		return r.(*Recorder)
	}
	r, _ := recorders.LoadOrStore(v.Root(), &Recorder{v: v, dir: v.MustPath(RecallDir)})
	return r.(*Recorder)
}

// SetEnabled turns recording on or off for this process (benchmarks
// compare both; a person can turn it off with curator: recall: false).
func (r *Recorder) SetEnabled(on bool) {
	r.mu.Lock()
	r.off = !on
	r.mu.Unlock()
}

// Record buffers one event; it never blocks on the disk. The buffer is
// appended to the log within a second, or at [Recorder.Flush].
func (r *Recorder) Record(e RecallEvent) {
	if e.Agent == "" || e.Kind == "" {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Millis = e.Time.UnixMilli()
	line, err := json.Marshal(e)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.off || r.v.Config().Curator.RecallOff() {
		return
	}
	r.buf = append(append(r.buf, line...), '\n')
	switch {
	case len(r.buf) >= flushBytes:
		r.flushLocked()
	case r.timer == nil:
		r.timer = time.AfterFunc(flushAfter, func() { r.Flush() })
	}
}

// Flush appends the buffered events to the log now. CLI commands call it
// before they exit; the MCP server when it closes.
func (r *Recorder) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flushLocked()
}

func (r *Recorder) flushLocked() error {
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	if len(r.buf) == 0 {
		return r.lastErr
	}
	data := r.buf
	r.buf = nil
	r.lastErr = appendLocked(r.v, filepath.Join(r.dir, "events.log"), data)
	return r.lastErr
}

// appendLocked appends data to path under the recall lock: the lock keeps
// lines of several processes whole and lets a fold rename the log safely.
func appendLocked(v *vault.Vault, path string, data []byte) error {
	unlock, err := v.Lock("recall")
	if err != nil {
		return err
	}
	defer unlock()
	if err := vault.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("record recall: %w", err)
	}
	f, err := vault.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("record recall: %w", err)
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("record recall: %w", werr)
	}
	return nil
}

// FlushRecall flushes every recorder of this process (for a CLI command
// about to exit).
func FlushRecall() {
	recorders.Range(func(_, r any) bool {
		r.(*Recorder).Flush()
		return true
	})
}

// RecordSessionStart records that agent's session start was rendered.
func RecordSessionStart(v *vault.Vault, agent, via string) {
	Recall(v).Record(RecallEvent{Agent: agent, Kind: RecallStart, Via: via})
}

// RecordRead records that reader read the vault file rel. For MEMORY.md
// and USER.md, data (the whole file) and the 1-based line range read name
// the entries that were recalled; pass nil otherwise.
func RecordRead(v *vault.Vault, reader, rel, via string, data []byte, from, to int) {
	e := RecallEvent{Agent: reader, Kind: RecallRead, Path: rel, Via: via}
	if data != nil && isMemoryFile(rel) {
		e.Entries = EntryIDsInLines(data, from, to)
	}
	if strings.HasPrefix(rel, "log/") {
		e.From, e.To = max(from, 1), to
	}
	Recall(v).Record(e)
}

// LogHit names a search hit on a log entry in the hits of [RecordHits]:
// the feed file and the entry's first line, "PATH#LINE". A later read of
// PATH whose lines cover LINE is a read of that entry.
func LogHit(path string, line int) string { return path + "#" + strconv.Itoa(line) }

// splitLogHit undoes [LogHit]; ok is false for a plain path.
func splitLogHit(h string) (path string, line int, ok bool) {
	i := strings.LastIndexByte(h, '#')
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(h[i+1:])
	if err != nil || n < 1 {
		return "", 0, false
	}
	return h[:i], n, true
}

// RecordHits records a search by agent and the paths it returned.
func RecordHits(v *vault.Vault, agent, query, via string, paths []string) {
	if len(paths) == 0 {
		return
	}
	Recall(v).Record(RecallEvent{Agent: agent, Kind: RecallHits, Query: query, Hits: paths, Via: via})
}

func isMemoryFile(rel string) bool {
	return strings.HasPrefix(rel, "agents/") && (strings.HasSuffix(rel, "/"+MemoryFile) || strings.HasSuffix(rel, "/"+UserFile)) && strings.Count(rel, "/") == 2
}

// EntryIDsInLines returns the ids of the bounded-memory entries of data
// (a MEMORY.md or USER.md) that have a line in from..to (1-based,
// inclusive; to <= 0 means to the end).
func EntryIDsInLines(data []byte, from, to int) []string {
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	if to <= 0 || to > len(lines) {
		to = len(lines)
	}
	var ids []string
	var cur []string
	touched := false
	end := func() {
		if e := strings.TrimSpace(strings.Join(cur, "\n")); e != "" && touched {
			ids = append(ids, EntryID(e))
		}
		cur, touched = nil, false
	}
	for i, l := range lines {
		if isSeparatorLine(l) {
			end()
			continue
		}
		cur = append(cur, l)
		if n := i + 1; n >= from && n <= to && strings.TrimSpace(l) != "" {
			touched = true
		}
	}
	end()
	return ids
}

// Use is how often one fact file or entry was recalled, and when last.
type Use struct {
	// Reads counts fact_read, memory_get and 'nexus fact read' of it.
	Reads    int       `json:"reads"`
	LastRead time.Time `json:"last_read,omitzero"`
	// SearchReads counts reads that followed a search returning it; the
	// queries are in Queries (query -> count, the 32 most used kept).
	SearchReads    int            `json:"search_reads"`
	LastSearchRead time.Time      `json:"last_search_read,omitzero"`
	Queries        map[string]int `json:"queries,omitempty"`
	// Readers are the agents that read it (agent -> count).
	Readers map[string]int `json:"readers,omitempty"`
}

// Last is the most recent recall.
func (u Use) Last() time.Time {
	if u.LastSearchRead.After(u.LastRead) {
		return u.LastSearchRead
	}
	return u.LastRead
}

// Starts counts one agent's session starts.
type Starts struct {
	Count int       `json:"count"`
	Last  time.Time `json:"last,omitzero"`
}

type hitSet struct {
	Millis int64    `json:"t"`
	Query  string   `json:"q"`
	Paths  []string `json:"h"`
}

// RecallSummary is every recall signal folded together.
type RecallSummary struct {
	// Files: vault-relative path -> use (fact files, MEMORY.md, ...).
	Files map[string]*Use `json:"files"`
	// Entries: "agents/A/MEMORY.md#ID" -> use of one bounded-memory entry.
	Entries map[string]*Use `json:"entries"`
	// Logs: agent -> "PATH#LINE" ([LogHit]) -> that agent's reads of one
	// log entry it had found with a search (only such reads are known to
	// be of one entry, so Reads == SearchReads).
	Logs map[string]map[string]*Use `json:"logs,omitempty"`
	// Sessions: agent -> its session starts.
	Sessions map[string]*Starts `json:"sessions"`
	// First is the time of the first event ever recorded on this machine.
	First time.Time `json:"first,omitzero"`

	// recent searches per agent, to pair reads with the query that found
	// them across folds.
	Recent map[string][]hitSet `json:"recent,omitempty"`
	// Merged names the log files already folded in (a fold killed before
	// removing one must not count it twice).
	Merged []string `json:"merged,omitempty"`
}

// File returns the use of a file (zero if never recalled).
func (s *RecallSummary) File(rel string) Use {
	if u := s.Files[rel]; u != nil {
		return *u
	}
	return Use{}
}

// Entry returns the use of one entry of a MEMORY.md/USER.md.
func (s *RecallSummary) Entry(rel, id string) Use {
	if u := s.Entries[rel+"#"+id]; u != nil {
		return *u
	}
	return Use{}
}

// LogEntries returns agent's recalled log entries, "PATH#LINE" -> use
// (nil if none). The map belongs to the summary.
func (s *RecallSummary) LogEntries(agent string) map[string]*Use { return s.Logs[agent] }

// Session returns an agent's session starts.
func (s *RecallSummary) Session(agent string) Starts {
	if st := s.Sessions[agent]; st != nil {
		return *st
	}
	return Starts{}
}

// maxQueries bounds the queries kept per file or entry.
const maxQueries = 32

func (s *RecallSummary) fold(e RecallEvent) {
	t := time.UnixMilli(e.Millis).UTC()
	if s.First.IsZero() || t.Before(s.First) {
		s.First = t
	}
	switch e.Kind {
	case RecallStart:
		st := s.Sessions[e.Agent]
		if st == nil {
			st = &Starts{}
			s.Sessions[e.Agent] = st
		}
		st.Count++
		if t.After(st.Last) {
			st.Last = t
		}
	case RecallHits:
		rec := append(s.Recent[e.Agent], hitSet{Millis: e.Millis, Query: e.Query, Paths: e.Hits})
		cut := 0
		for cut < len(rec) && (e.Millis-rec[cut].Millis > searchWindow.Milliseconds() || len(rec)-cut > 32) {
			cut++
		}
		s.Recent[e.Agent] = rec[cut:]
	case RecallRead:
		query, found := "", false
		rec := s.Recent[e.Agent]
		for i := len(rec) - 1; i >= 0 && !found; i-- {
			if d := e.Millis - rec[i].Millis; d < 0 || d > searchWindow.Milliseconds() {
				continue
			}
			for _, p := range rec[i].Paths {
				if p == e.Path {
					query, found = rec[i].Query, true
					break
				}
			}
		}
		bump := func(m map[string]*Use, key string, found bool, query string) {
			u := m[key]
			if u == nil {
				u = &Use{}
				m[key] = u
			}
			u.Reads++
			if t.After(u.LastRead) {
				u.LastRead = t
			}
			if u.Readers == nil {
				u.Readers = map[string]int{}
			}
			if _, ok := u.Readers[e.Agent]; ok || len(u.Readers) < maxQueries {
				u.Readers[e.Agent]++
			}
			if found {
				u.SearchReads++
				if t.After(u.LastSearchRead) {
					u.LastSearchRead = t
				}
				if u.Queries == nil {
					u.Queries = map[string]int{}
				}
				q := normQuery(query)
				if _, ok := u.Queries[q]; !ok && len(u.Queries) >= maxQueries {
					dropRarest(u.Queries)
				}
				u.Queries[q]++
			}
		}
		bump(s.Files, e.Path, found, query)
		for _, id := range e.Entries {
			bump(s.Entries, e.Path+"#"+id, found, query)
		}
		if e.From > 0 {
			// A read of a log file: each log hit of a recent search inside
			// the lines read is a read of that entry, with the newest
			// search's query.
			seen := map[string]bool{}
			for i := len(rec) - 1; i >= 0; i-- {
				if d := e.Millis - rec[i].Millis; d < 0 || d > searchWindow.Milliseconds() {
					continue
				}
				for _, h := range rec[i].Paths {
					p, line, ok := splitLogHit(h)
					if !ok || seen[h] || p != e.Path || line < e.From || (e.To > 0 && line > e.To) {
						continue
					}
					seen[h] = true
					if s.Logs == nil {
						s.Logs = map[string]map[string]*Use{}
					}
					if s.Logs[e.Agent] == nil {
						s.Logs[e.Agent] = map[string]*Use{}
					}
					bump(s.Logs[e.Agent], h, true, rec[i].Query)
				}
			}
		}
	}
}

// normQuery makes "Staging  SSH" and "staging ssh" one query.
func normQuery(q string) string { return strings.ToLower(strings.Join(strings.Fields(q), " ")) }

func dropRarest(m map[string]int) {
	worst, n := "", -1
	for k, c := range m {
		if n < 0 || c < n || (c == n && k > worst) {
			worst, n = k, c
		}
	}
	delete(m, worst)
}

// LoadRecall flushes this process's events, folds the recall log into
// summary.json and returns the summary. Several processes may record and
// load at once: the log is renamed under the recall lock before it is
// folded, and a fold killed half way never counts an event twice.
func LoadRecall(v *vault.Vault) (*RecallSummary, error) {
	Recall(v).Flush()
	dir := v.MustPath(RecallDir)
	unlock, err := v.Lock("recall-fold")
	if err != nil {
		return nil, err
	}
	defer unlock()
	s, err := readSummary(dir)
	if err != nil {
		return nil, err
	}
	// Take the current log out of the writers' way.
	if err := rotateLog(v, dir); err != nil {
		return nil, err
	}
	des, err := vault.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read recall: %w", err)
	}
	merged := map[string]bool{}
	for _, m := range s.Merged {
		merged[m] = true
	}
	var todo []string
	for _, de := range des {
		if name := de.Name(); strings.HasPrefix(name, "fold-") && strings.HasSuffix(name, ".log") {
			todo = append(todo, name)
		}
	}
	sort.Strings(todo)
	// Names recorded as merged whose files are gone need no memory.
	present := map[string]bool{}
	for _, n := range todo {
		present[n] = true
	}
	var keep []string
	for _, m := range s.Merged {
		if present[m] {
			keep = append(keep, m)
		}
	}
	s.Merged = keep
	var fresh []string
	var evs []RecallEvent
	for _, name := range todo {
		if merged[name] {
			continue
		}
		data, err := vault.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("read recall log: %w", err)
		}
		evs = append(evs, parseEvents(data)...)
		fresh = append(fresh, name)
	}
	if len(fresh) > 0 {
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].Millis < evs[j].Millis })
		for _, e := range evs {
			s.fold(e)
		}
		s.Merged = append(s.Merged, fresh...)
		if err := writeSummary(dir, s); err != nil {
			return nil, err
		}
	}
	// Folded: the logs can go (a crash before this is harmless, Merged
	// names them).
	for _, name := range todo {
		vault.Remove(filepath.Join(dir, name))
	}
	return s, nil
}

// rotateLog renames events.log to fold-NANOS.log under the recall lock, so
// no writer is appending to it while it is folded.
func rotateLog(v *vault.Vault, dir string) error {
	unlock, err := v.Lock("recall")
	if err != nil {
		return err
	}
	defer unlock()
	src := filepath.Join(dir, "events.log")
	if _, err := vault.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	dst := filepath.Join(dir, "fold-"+strconv.FormatInt(time.Now().UnixNano(), 10)+".log")
	if err := vault.Rename(src, dst); err != nil {
		return fmt.Errorf("rotate recall log: %w", err)
	}
	return nil
}

func parseEvents(data []byte) []RecallEvent {
	var out []RecallEvent
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var e RecallEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Agent == "" || e.Millis <= 0 {
			continue // a line torn by a crash
		}
		out = append(out, e)
	}
	return out
}

func readSummary(dir string) (*RecallSummary, error) {
	s := &RecallSummary{}
	data, err := vault.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read recall summary: %w", err)
	}
	if len(data) > 0 {
		if err := json.Unmarshal(data, s); err != nil {
			// Derived data: a damaged summary starts over rather than
			// stopping the curator.
			s = &RecallSummary{}
		}
	}
	if s.Files == nil {
		s.Files = map[string]*Use{}
	}
	if s.Entries == nil {
		s.Entries = map[string]*Use{}
	}
	if s.Sessions == nil {
		s.Sessions = map[string]*Starts{}
	}
	if s.Recent == nil {
		s.Recent = map[string][]hitSet{}
	}
	return s, nil
}

func writeSummary(dir string, s *RecallSummary) error {
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode recall summary: %w", err)
	}
	if err := vault.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write recall summary: %w", err)
	}
	return vault.WriteFile(filepath.Join(dir, "summary.json"), data, 0o644)
}
