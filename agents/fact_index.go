package agents

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/internal/scan"
	"github.com/nexus-memory/nexus/vault"
)

// FactCacheDir holds one cache file per agent: for every fact file its size,
// modification time and the frontmatter the index needs. It is derived
// state; deleting it costs one rescan.
const FactCacheDir = vault.StateDir + "/facts"

// cacheableFile reports whether a directory entry in memory/ is a fact
// file: a visible regular *.md file other than INDEX.md whose name can live
// in a cache line.
func cacheableFile(name string) bool {
	return strings.HasSuffix(name, ".md") && !strings.EqualFold(name, "INDEX.md") &&
		!strings.HasPrefix(name, ".") && !strings.ContainsAny(name, "\t\n\r") && utf8.ValidString(name) &&
		!vault.IsConflictCopy(name) // a sync tool's second version: handled by conflicts.Resolve
}

func entryFromFact(f Fact, info fs.FileInfo, now time.Time) *cacheEntry {
	e := &cacheEntry{Size: info.Size(), ModNanos: info.ModTime().UnixNano(), Created: f.Created, Updated: f.Updated,
		Type: oneLine(f.Type), Name: norm.NFC.String(oneLine(f.Name)), Description: norm.NFC.String(oneLine(f.Description)),
		Source: oneLine(f.Source)}
	// A file modified within the last two seconds may change again within
	// the same clock tick without changing size; re-read it next time
	// rather than trust size and mtime.
	if now.Sub(info.ModTime()) < 2*time.Second {
		e.Size = -1
	}
	return e
}

// factStore is one agent's facts while its lock is held.
type factStore struct {
	v       *vault.Vault
	agent   string
	entries *factCache
}

// openFactStore takes the agent's facts lock and loads the cache, scanning
// the folder if there is no usable cache.
func openFactStore(v *vault.Vault, agent string) (*factStore, func(), error) {
	if _, err := vault.Stat(v.MustPath(identity.IdentityPath(agent))); err != nil {
		return nil, nil, &identity.NoAgentError{Name: agent}
	}
	unlock, err := v.Lock(HomePath(agent, FactsDir))
	if err != nil {
		return nil, nil, err
	}
	st := &factStore{v: v, agent: agent}
	if st.entries, err = loadFactCache(v, agent); err != nil {
		unlock()
		return nil, nil, err
	}
	if st.entries == nil {
		st.entries = newFactCache()
		if err := st.rescan(); err != nil {
			unlock()
			return nil, nil, err
		}
	}
	release := func() {
		// An operation that ended without changing anything (a refused
		// duplicate, a read) leaves the parsed cache for the next one.
		if c := st.entries; len(c.changed) == 0 && c.token != "" {
			memos.Store(cachePath(v, agent), c)
		}
		unlock()
	}
	return st, release, nil
}

// openFactStoreRead is [openFactStore] for readers. Where the lock cannot
// be taken because this process may not write the vault's state at all
// (another user's vault, a read-only disk, a file where the lock folder
// should be), it reads without the lock — the fact files are replaced
// atomically, so each read sees whole files — and readOnly tells the caller
// not to write (INDEX.md stays as it is).
func openFactStoreRead(v *vault.Vault, agent string) (st *factStore, release func(), readOnly bool, err error) {
	st, release, err = openFactStore(v, agent)
	if err == nil || !vault.IsReadOnly(err) {
		return st, release, false, err
	}
	st = &factStore{v: v, agent: agent}
	if st.entries, err = loadFactCache(v, agent); err != nil && !vault.IsReadOnly(err) {
		return nil, nil, true, err
	}
	if st.entries == nil || err != nil {
		st.entries = newFactCache() // an unreadable cache: read the files
		if err := st.rescan(); err != nil {
			return nil, nil, true, err
		}
	}
	return st, func() {}, true, nil
}

func (st *factStore) dir() string { return st.v.MustPath(HomePath(st.agent, FactsDir)) }

// rescan brings the entries in step with the folder, re-reading only files
// whose size or modification time differ from the cache.
func (st *factStore) rescan() error {
	des, err := vault.ReadDir(st.dir())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("list facts of %s: %w", st.agent, err)
	}
	now := time.Now()
	seen := make(map[string]bool, len(des))
	for _, de := range des {
		name := norm.NFC.String(de.Name())
		if !de.Type().IsRegular() || !cacheableFile(name) {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue // vanished meanwhile
		}
		seen[name] = true
		if e, ok := st.entries.get(name); ok && e.Size == info.Size() && e.ModNanos == info.ModTime().UnixNano() {
			continue
		}
		// A person may be saving it in place right now (truncate, then
		// write): an empty read would drop the fact's name from the cache,
		// and a write of that name would then take a "-2" slug.
		data, err := vault.ReadStable(filepath.Join(st.dir(), de.Name()))
		if err != nil {
			continue
		}
		f, err := ParseFact(strings.TrimSuffix(name, ".md"), data)
		if err != nil {
			continue // not text: not a fact
		}
		if st.entries.rendered != nil {
			st.entries.rendered, st.entries.offs = nil, nil // many changes: render once at flush
		}
		st.entries.put(name, entryFromFact(f, info, now))
	}
	for _, name := range append([]string(nil), st.entries.files...) {
		if !seen[name] {
			st.entries.rendered, st.entries.offs = nil, nil
			st.entries.del(name)
		}
	}
	return nil
}

// byName returns the slug of the fact named name, if any.
func (st *factStore) byName(name string) (string, bool) {
	file, ok := st.entries.byName(oneLine(name))
	return strings.TrimSuffix(file, ".md"), ok
}

func (st *factStore) fullError(limit int) error {
	merge, old := st.candidates(3)
	hint := ""
	if len(merge) > 0 {
		hint += "; facts that may belong together: " + strings.Join(merge, ", ")
	}
	if len(old) > 0 {
		hint += "; least recently updated: " + strings.Join(old, ", ")
	}
	return fmt.Errorf("%s has %d facts and memory/INDEX.md allows %d lines: merge related facts into one ('nexus fact write --update'), or archive facts no longer needed ('nexus fact remove SLUG'), then retry; or raise memory_index_line_limit in %s%s: %w",
		st.agent, st.entries.len(), limit, vault.ConfigFile, hint, ErrIndexFull)
}

// candidates suggests what to merge — the largest groups of facts whose
// slugs start with the same word, as "staging-* (4)" — and what to archive:
// the n least recently updated facts.
func (st *factStore) candidates(n int) (merge, old []string) {
	groups := map[string]int{}
	for _, f := range st.entries.files {
		word, _, _ := strings.Cut(strings.TrimSuffix(f, ".md"), "-")
		groups[word]++
	}
	type group struct {
		word  string
		count int
	}
	var gs []group
	for w, c := range groups {
		if c > 1 {
			gs = append(gs, group{w, c})
		}
	}
	sort.Slice(gs, func(i, j int) bool {
		if gs[i].count != gs[j].count {
			return gs[i].count > gs[j].count
		}
		return gs[i].word < gs[j].word
	})
	for _, g := range gs[:min(n, len(gs))] {
		merge = append(merge, fmt.Sprintf("%s-* (%d)", g.word, g.count))
	}
	files := append([]string(nil), st.entries.files...)
	sort.SliceStable(files, func(i, j int) bool {
		return st.entries.m[files[i]].Updated.Before(st.entries.m[files[j]].Updated)
	})
	for _, f := range files[:min(n, len(files))] {
		old = append(old, strings.TrimSuffix(f, ".md"))
	}
	return merge, old
}

// create writes a new fact file under a unique slug.
func (st *factStore) create(in FactInput, now time.Time) (Fact, error) {
	base, err := Slugify(in.Name)
	if err != nil {
		return Fact{}, err
	}
	if err := vault.MkdirAll(st.dir(), 0o755); err != nil {
		return Fact{}, fmt.Errorf("create %s: %w", HomePath(st.agent, FactsDir), err)
	}
	data, err := renderFact(in, now, now)
	if err != nil {
		return Fact{}, err
	}
	for i := 1; ; i++ {
		slug := base
		if i > 1 {
			slug = base + "-" + strconv.Itoa(i)
		}
		if reservedSlugs[slug] || st.taken(slug) {
			continue
		}
		p := st.v.MustPath(FactPath(st.agent, slug))
		err := vault.ReplaceIf(p, nil, data, 0o644)
		if errors.Is(err, vault.ErrConflict) {
			continue // a file of that name appeared: take the next slug
		}
		// A write that landed is done even if its folder's fsync failed:
		// reported as failed, a retry would write the fact again as SLUG-2.
		if !vault.Written(err) {
			return Fact{}, fmt.Errorf("write fact %s: %w", slug, err)
		}
		f := Fact{Agent: st.agent, Slug: slug, Name: in.Name, Description: in.Description, Type: in.Type,
			Created: now, Updated: now, Source: in.Source, Body: in.Body, Path: FactPath(st.agent, slug)}
		st.record(slug, f, p)
		return f, nil
	}
}

// taken reports whether slug is used by a cached fact, compared without
// case (file systems on macOS and Windows ignore case).
func (st *factStore) taken(slug string) bool {
	if _, ok := st.entries.get(slug + ".md"); ok {
		return true
	}
	for _, file := range st.entries.files {
		if len(file) == len(slug)+3 && strings.EqualFold(file, slug+".md") {
			return true
		}
	}
	return false
}

// update replaces an existing fact with compare-and-swap, retrying when a
// person saves the file in between.
func (st *factStore) update(slug string, in FactInput, now time.Time) (Fact, error) {
	p := st.v.MustPath(FactPath(st.agent, slug))
	for attempt := 0; ; attempt++ {
		// Not an empty read of a save in progress: the update would be
		// computed from nothing and the person's text would land in the
		// file this replaces.
		old, err := vault.ReadStable(p)
		if errors.Is(err, fs.ErrNotExist) {
			st.entries.del(slug + ".md")
			return st.create(in, now)
		}
		if err != nil {
			return Fact{}, fmt.Errorf("read fact %s: %w", slug, err)
		}
		var data []byte
		if _, _, ok := vault.SplitFrontmatter(old); ok {
			data, err = updateFactBytes(old, in, now)
		} else {
			// A hand-made fact without frontmatter gets one.
			data, err = renderFact(in, now, now)
		}
		if err != nil {
			return Fact{}, err
		}
		err = vault.ReplaceIf(p, old, data, 0o644)
		if errors.Is(err, vault.ErrConflict) && attempt < vault.CASAttempts {
			continue
		}
		if !vault.Written(err) {
			return Fact{}, fmt.Errorf("update fact %s: %w", slug, err)
		}
		f, err := ParseFact(slug, data)
		if err != nil {
			return Fact{}, err
		}
		f.Agent, f.Path = st.agent, FactPath(st.agent, slug)
		st.record(slug, f, p)
		return f, nil
	}
}

func (st *factStore) record(slug string, f Fact, abs string) {
	info, err := vault.Stat(abs)
	var e *cacheEntry
	if err == nil {
		e = entryFromFact(f, info, time.Now())
	} else {
		e = &cacheEntry{Size: -1, Name: f.Name, Description: f.Description, Type: f.Type, Created: f.Created, Updated: f.Updated, Source: f.Source}
	}
	st.entries.put(slug+".md", e)
}

// renderIndex renders INDEX.md from the entries: one line per fact in slug
// order, at most limit lines; past the limit the last line says how many
// facts are left out. over is how many facts did not fit.
func (st *factStore) renderIndex(limit int) (data []byte, over int) {
	c := st.entries
	files := c.files
	n := len(files)
	if n <= limit && c.rendered != nil {
		return c.rendered, 0 // kept up to date by put and del
	}
	var b bytes.Buffer
	b.Grow(len(files)*96 + 200)
	if n > limit {
		over = n - (limit - 1)
		n = limit - 1
	}
	var offs []int
	if over == 0 {
		offs = make([]int, 0, n+1)
	}
	for _, file := range files[:n] {
		if offs != nil {
			offs = append(offs, b.Len())
		}
		b.WriteString(c.m[file].indexLine(file))
		b.WriteByte('\n')
	}
	if over > 0 {
		fmt.Fprintf(&b, "- … %d more facts not listed: the index allows %d lines; merge related facts or archive old ones (nexus fact remove SLUG)\n", over, limit)
		c.rendered, c.offs = nil, nil
	} else {
		c.rendered, c.offs = b.Bytes(), append(offs, b.Len())
	}
	return b.Bytes(), over
}

// IndexLine renders one line of memory/INDEX.md:
// "- [[SLUG|name]] — description". Characters that would break the link
// ('[', ']', '|') are shown as their full-width forms ('［', '］', '｜'),
// which read the same and keep the link intact in Obsidian.
func IndexLine(slug, name, description string) string {
	shown := linkTextReplacer.Replace(oneLine(name))
	if strings.TrimSpace(shown) == "" {
		shown = slug
	}
	line := "- [[" + slug + "|" + shown + "]]"
	if d := oneLine(description); d != "" {
		line += " — " + d
	}
	return line
}

var linkTextReplacer = strings.NewReplacer("[", "［", "]", "］", "|", "｜")

// flush writes INDEX.md if its content changed, and the cache's changes.
// It returns [ErrIndexFull] (after writing the capped index) when there are
// more facts than lines allowed.
func (st *factStore) flush() error {
	c := st.entries
	limit := st.v.Config().MemoryIndexLineLimit
	data, over := st.renderIndex(limit)
	p := st.v.MustPath(HomePath(st.agent, IndexFile))
	info, err := vault.Stat(p)
	var old []byte
	switch {
	case errors.Is(err, fs.ErrNotExist):
		info = nil
	case err != nil:
		return fmt.Errorf("read memory index of %s: %w", st.agent, err)
	case c.index != nil && info.Size() == c.indexSize && info.ModTime().UnixNano() == c.indexM:
		old = c.index // unchanged since this process wrote or read it
	default:
		if old, err = vault.ReadFile(p); err != nil {
			return fmt.Errorf("read memory index of %s: %w", st.agent, err)
		}
	}
	if (info == nil && c.len() > 0) || (info != nil && !bytes.Equal(old, data)) {
		// INDEX.md is generated: a person's edit to it is replaced, as the
		// fact files are the source. Written like the cache (see
		// writeDerived).
		if err := vault.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write memory index of %s: %w", st.agent, err)
		}
		if err := writeDerived(p, data); err != nil {
			return fmt.Errorf("write memory index of %s: %w", st.agent, err)
		}
		if info, err = vault.Stat(p); err != nil {
			info = nil
		}
	}
	if info != nil {
		c.index, c.indexSize, c.indexM = data, info.Size(), info.ModTime().UnixNano()
	}
	cp := cachePath(st.v, st.agent)
	if err := vault.MkdirAll(filepath.Dir(cp), 0o755); err != nil {
		return fmt.Errorf("write fact cache: %w", err)
	}
	if err := c.save(cp); err != nil {
		return fmt.Errorf("write fact cache: %w", err)
	}
	memos.Store(cp, c)
	if over > 0 {
		return st.fullError(limit)
	}
	return nil
}

// SyncIndex brings agent's memory/INDEX.md in step with the fact files in
// memory/, including files a person created, edited, renamed or deleted by
// hand. It re-reads only files whose size or modification time changed
// since the last sync, and rewrites INDEX.md only when its content changes.
// When there are more facts than the index allows it writes the capped
// index and returns [ErrIndexFull].
func SyncIndex(v *vault.Vault, agent string) error {
	if err := identity.ValidName(agent); err != nil {
		return err
	}
	st, unlock, readOnly, err := openFactStoreRead(v, agent)
	if err != nil {
		return err
	}
	defer unlock()
	if err := st.rescan(); err != nil {
		return err
	}
	if readOnly {
		return fmt.Errorf("memory index of %s not brought in step with its fact files: %w", agent, vault.ErrReadOnly)
	}
	if err := st.flush(); vault.IsReadOnly(err) {
		return fmt.Errorf("memory index of %s not brought in step with its fact files: %w", agent, err)
	} else if err != nil {
		return err
	}
	return nil
}

// SyncAllIndexes runs [SyncIndex] for every agent. It is what the watch and
// serve loops call when files change.
func SyncAllIndexes(v *vault.Vault) error {
	names, err := identity.List(v)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		if err := SyncIndex(v, n); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// IndexBanner is the heading of the memory index in the session-start
// render.
const IndexBanner = "MEMORY INDEX (your fact files; read one with fact_read)"

// RenderIndex returns the memory index block for the session-start render:
// after [SyncIndex], INDEX.md under a banner like the MEMORY block's, with
// the line count and limit. An agent without facts renders as "".
func RenderIndex(v *vault.Vault, agent string) (string, error) {
	if err := SyncIndex(v, agent); err != nil && !errors.Is(err, ErrIndexFull) && !vault.IsReadOnly(err) {
		return "", err // without write access, INDEX.md is shown as it is
	}
	data, err := vault.ReadFile(v.MustPath(HomePath(agent, IndexFile)))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read memory index of %s: %w", agent, err)
	}
	body := strings.TrimRight(string(data), "\n")
	if body == "" {
		return "", nil
	}
	body = withholdIndexLines(agent, body)
	lines := strings.Count(body, "\n") + 1
	bar := strings.Repeat("═", 46)
	return fmt.Sprintf("%s\n%s [%d/%d lines]\n%s\n%s", bar, IndexBanner, lines, v.Config().MemoryIndexLineLimit, bar, body), nil
}

// withholdIndexLines scans the memory index as it goes into a prompt
// (docs/scan.md, "At read time"): fact files reach INDEX.md without
// Nexus's write scan when a sync tool or a person drops them in, and a
// line that fails is withheld, naming its fact file. It scans one
// line at a time: Go's regexp runs a short text through its backtracker,
// several times faster than a long one through the NFA.
func withholdIndexLines(agent, body string) string {
	lines := strings.Split(body, "\n")
	changed := false
	for i, line := range lines {
		if shown := scan.Shown(line); shown != line {
			lines[i], line, changed = shown, shown, true // no bidi override or smuggled tags
		}
		rule := indexLineRule(line)
		if rule == "" {
			continue
		}
		what := "a line of the memory index"
		where := HomePath(agent, IndexFile)
		if slug, _, ok := strings.Cut(strings.TrimPrefix(line, "- [["), "|"); ok && strings.HasPrefix(line, "- [[") && validSlug(slug) == nil {
			what = "the index line of fact " + slug
			where = FactPath(agent, slug)
		}
		lines[i] = "- " + scan.Withheld(rule, what, "a person can read and fix "+where)
		changed = true
	}
	if !changed {
		return body
	}
	return strings.Join(lines, "\n")
}

// indexLineVerdicts remembers the scan's verdict on index lines this
// process has seen: a server renders the same index at every session
// start, and a line costs about 10 µs to scan. Bounded: cleared when full.
var indexLineVerdicts = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

const maxIndexLineVerdicts = 20000

// indexLineRule is [scan.ReadRule] of an index line, remembered.
func indexLineRule(line string) string {
	indexLineVerdicts.Lock()
	rule, ok := indexLineVerdicts.m[line]
	indexLineVerdicts.Unlock()
	if ok {
		return rule
	}
	rule = scan.ReadRule(line)
	indexLineVerdicts.Lock()
	if len(indexLineVerdicts.m) >= maxIndexLineVerdicts {
		clear(indexLineVerdicts.m)
	}
	indexLineVerdicts.m[line] = rule
	indexLineVerdicts.Unlock()
	return rule
}
