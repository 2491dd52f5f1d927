package agents

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nexus-memory/nexus/internal/atomicfile"
	"github.com/nexus-memory/nexus/vault"
)

// The fact cache, .nexus/state/facts/AGENT.cache, is derived state: for
// every fact file its size, modification time and the frontmatter the
// index needs. Its first line is cacheHeader and a random token, new at
// every full rewrite. Then come records, one per line, tab-separated:
//
//	FILE SIZE MTIME_NS CREATED UPDATED TYPE NAME DESCRIPTION SOURCE
//
// or "FILE\t-" for a file that is gone. A write appends the records it
// changed (later records win) and the file is rewritten in full when the
// appended records outnumber the live ones, so a fact write costs O(1)
// cache I/O, not a rewrite of 10,000 lines. A torn or foreign cache is
// discarded and rebuilt by rescanning the folder.
const cacheHeader = "nexus fact cache v1"

// cacheEntry is what the index and fact listings need from one fact file.
type cacheEntry struct {
	Size        int64 // -1: re-read at the next sync
	ModNanos    int64
	Created     time.Time
	Updated     time.Time
	Type        string
	Name        string
	Description string
	Source      string

	line string // rendered index line, filled on first use
	rec  string // rendered cache record, filled on first use
}

func (e *cacheEntry) record(file string) string {
	if e.rec == "" {
		e.rec = strings.Join([]string{file,
			strconv.FormatInt(e.Size, 10), strconv.FormatInt(e.ModNanos, 10),
			strconv.FormatInt(timeUnix(e.Created), 10), strconv.FormatInt(timeUnix(e.Updated), 10),
			e.Type, e.Name, e.Description, e.Source}, "\t")
	}
	return e.rec
}

func (e *cacheEntry) indexLine(file string) string {
	if e.line == "" {
		e.line = IndexLine(strings.TrimSuffix(file, ".md"), e.Name, e.Description)
	}
	return e.line
}

// factCache is one agent's cache in memory: entries by fact file name
// (SLUG.md, NFC), the names sorted (the index order), and what is known
// about the files on disk.
type factCache struct {
	m     map[string]*cacheEntry
	files []string // sorted keys of m

	byKey   map[string]string // nameKey(name) -> file; built on first use
	changed []string          // files put or deleted since the last flush

	token   string // token of the cache file these entries are in step with
	size    int64  // that file's size
	records int    // records in that file

	// The memory index as last written or read, and its file's size and
	// mtime then; lets a flush skip re-reading an unchanged INDEX.md.
	index             []byte
	indexSize, indexM int64

	// rendered is the full index of these entries (when it fits the
	// limit), with offs[i] the offset of files[i]'s line and a last offset
	// at the end. put and del splice one line in or out instead of
	// re-rendering 10,000 lines; a new buffer each time, never in place,
	// since index may share it. nil: render in full at the next flush.
	rendered []byte
	offs     []int
}

func newFactCache() *factCache { return &factCache{m: map[string]*cacheEntry{}} }

func (c *factCache) get(file string) (*cacheEntry, bool) {
	e, ok := c.m[file]
	return e, ok
}

func (c *factCache) len() int { return len(c.m) }

func (c *factCache) put(file string, e *cacheEntry) {
	old, ok := c.m[file]
	i := sort.SearchStrings(c.files, file)
	if !ok {
		c.files = append(c.files, "")
		copy(c.files[i+1:], c.files[i:])
		c.files[i] = file
	} else if old.Name != e.Name {
		c.byKey = nil // the old name may belong to another file too: rebuild
	}
	c.m[file] = e
	if c.rendered != nil {
		line := e.indexLine(file) + "\n"
		if ok {
			c.splice(i, c.offs[i+1]-c.offs[i], line, 0)
		} else {
			c.splice(i, 0, line, 1)
		}
	}
	if c.byKey != nil {
		if _, taken := c.byKey[nameKey(e.Name)]; !taken {
			c.byKey[nameKey(e.Name)] = file
		}
	}
	c.changed = append(c.changed, file)
}

func (c *factCache) del(file string) {
	old, ok := c.m[file]
	if !ok {
		return
	}
	delete(c.m, file)
	i := sort.SearchStrings(c.files, file)
	if i < len(c.files) && c.files[i] == file {
		c.files = append(c.files[:i], c.files[i+1:]...)
		if c.rendered != nil {
			c.splice(i, c.offs[i+1]-c.offs[i], "", -1)
		}
	}
	if c.byKey != nil && c.byKey[nameKey(old.Name)] == file {
		c.byKey = nil // another file may carry the same name: rebuild
	}
	c.changed = append(c.changed, file)
}

// splice replaces the cut bytes of rendered at line i with line, and
// fixes the offsets: lines is +1 for an inserted line, -1 for a removed
// one, 0 for a replaced one.
func (c *factCache) splice(i, cut int, line string, lines int) {
	at := c.offs[i]
	buf := make([]byte, 0, len(c.rendered)-cut+len(line))
	buf = append(buf, c.rendered[:at]...)
	buf = append(buf, line...)
	buf = append(buf, c.rendered[at+cut:]...)
	c.rendered = buf
	delta := len(line) - cut
	switch lines {
	case 1:
		c.offs = append(c.offs, 0)
		copy(c.offs[i+1:], c.offs[i:])
		c.offs[i] = at
	case -1:
		c.offs = append(c.offs[:i], c.offs[i+1:]...)
	}
	start := i + 1
	if lines == -1 {
		start = i
	}
	for j := start; j < len(c.offs); j++ {
		c.offs[j] += delta
	}
}

// byName returns the file of the fact named name (compared as [sameName]).
func (c *factCache) byName(name string) (string, bool) {
	if c.byKey == nil {
		c.byKey = make(map[string]string, len(c.m))
		for _, f := range c.files { // sorted: the first file wins
			k := nameKey(c.m[f].Name)
			if _, ok := c.byKey[k]; !ok {
				c.byKey[k] = f
			}
		}
	}
	f, ok := c.byKey[nameKey(name)]
	return f, ok
}

func cachePath(v *vault.Vault, agent string) string {
	return v.MustPath(FactCacheDir + "/" + agent + ".cache")
}

// memos keeps, per cache file, the parsed cache this process last wrote or
// read, so that a process writing many facts does not re-parse 10,000
// cache records each time. A memo is used only while the agent's facts
// lock is held, and only if the file still has the memo's token and size
// (a write by another process changes one or the other). It is taken out
// while in use and put back after a successful flush, so a failed
// operation leaves no memo behind. It is a cache: dropping it changes
// nothing but speed.
var memos sync.Map // cache file path -> *factCache

// loadFactCache reads an agent's cache; a missing or unusable cache is
// (nil, nil), meaning "rescan".
func loadFactCache(v *vault.Vault, agent string) (*factCache, error) {
	p := cachePath(v, agent)
	m, hadMemo := memos.LoadAndDelete(p)
	f, err := vault.OpenRead(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read fact cache of %s: %w", agent, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read fact cache of %s: %w", agent, err)
	}
	head := make([]byte, 128)
	n, _ := io.ReadFull(f, head)
	first, _, _ := bytes.Cut(head[:n], []byte("\n"))
	if hadMemo {
		if c := m.(*factCache); c.token != "" && c.size == info.Size() && string(first) == cacheHeader+" "+c.token {
			return c, nil
		}
	}
	rest, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read fact cache of %s: %w", agent, err)
	}
	return parseFactCache(append(head[:n], rest...)), nil
}

// parseFactCache parses a cache file; nil means unusable.
func parseFactCache(data []byte) *factCache {
	head, rest, _ := bytes.Cut(data, []byte("\n"))
	tok, ok := strings.CutPrefix(string(head), cacheHeader+" ")
	if !ok || tok == "" || (len(rest) > 0 && rest[len(rest)-1] != '\n') {
		return nil // foreign, or torn at the end
	}
	c := newFactCache()
	c.token, c.size = tok, int64(len(data))
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		c.records++
		f := strings.Split(string(line), "\t")
		if len(f) == 2 && f[1] == "-" && f[0] != "" {
			delete(c.m, f[0])
			continue
		}
		if len(f) != 9 || f[0] == "" {
			return nil
		}
		size, err1 := strconv.ParseInt(f[1], 10, 64)
		mod, err2 := strconv.ParseInt(f[2], 10, 64)
		cr, err3 := strconv.ParseInt(f[3], 10, 64)
		up, err4 := strconv.ParseInt(f[4], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			return nil
		}
		c.m[f[0]] = &cacheEntry{Size: size, ModNanos: mod, Created: unixTime(cr), Updated: unixTime(up),
			Type: f[5], Name: f[6], Description: f[7], Source: f[8]}
	}
	c.files = make([]string, 0, len(c.m))
	for f := range c.m {
		c.files = append(c.files, f)
	}
	sort.Strings(c.files)
	return c
}

func unixTime(s int64) time.Time {
	if s == 0 {
		return time.Time{}
	}
	return time.Unix(s, 0).UTC()
}

func timeUnix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// encode renders the whole cache file with a new token.
func (c *factCache) encode() []byte {
	var tok [8]byte
	rand.Read(tok[:])
	c.token = hex.EncodeToString(tok[:])
	var b bytes.Buffer
	b.Grow(len(c.files) * 128)
	b.WriteString(cacheHeader + " " + c.token + "\n")
	for _, file := range c.files {
		b.WriteString(c.m[file].record(file))
		b.WriteByte('\n')
	}
	c.records = len(c.files)
	c.size = int64(b.Len())
	return b.Bytes()
}

// save writes the changes since the last save: appended records when the
// file on disk is the one these entries came from and appends have not yet
// piled up, else a full rewrite.
func (c *factCache) save(path string) error {
	if len(c.changed) == 0 && c.token != "" {
		return nil
	}
	seen := map[string]bool{}
	var recs []string
	for i := len(c.changed) - 1; i >= 0; i-- {
		f := c.changed[i]
		if seen[f] {
			continue
		}
		seen[f] = true
		if e, ok := c.m[f]; ok {
			recs = append(recs, e.record(f))
		} else {
			recs = append(recs, f+"\t-")
		}
	}
	c.changed = c.changed[:0]
	if c.token != "" && c.records+len(recs) <= 2*len(c.m)+64 {
		data := []byte(strings.Join(recs, "\n") + "\n")
		if err := appendDerived(path, data); err == nil {
			c.size += int64(len(data))
			c.records += len(recs)
			return nil
		}
	}
	if err := vault.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeDerived(path, c.encode())
}

// appendDerived appends to a file of derived state, without fsync (see
// [writeDerived]). The caller holds the lock that serialises writers.
func appendDerived(path string, data []byte) error {
	f, err := vault.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeDerived replaces a file of derived state — the fact cache, or
// memory/INDEX.md — with a temp file (dot-named, so Obsidian ignores it)
// and a rename, without fsync. A reader sees the old file or the new,
// never a torn one. Both files are rebuilt from the fact files: the cache
// whenever it is missing, torn or stale (every entry is checked against its
// file's size and mtime), INDEX.md by every [SyncIndex] (each command,
// watch and serve). So a crash that loses the last rename costs a rescan or
// a rewrite, never a wrong index; the fact file itself is written durably.
// Skipping these fsyncs is what keeps a fact write in a home of 10,000
// facts under 5 ms (docs/benchmarks.md).
func writeDerived(path string, data []byte) (err error) {
	atomicfile.SweepStale(filepath.Dir(path)) // leftovers of writers killed here
	f, err := vault.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			vault.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		f.Close()
		return err
	}
	// CreateTemp makes it 0600; INDEX.md is a note like any other, and the
	// cache holds nothing secret: readable by whoever may read the vault.
	if err = f.Chmod(0o644); err != nil && runtime.GOOS != "windows" {
		f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return vault.Rename(f.Name(), path)
}
