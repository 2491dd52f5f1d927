package conflicts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// Two versions of a file that do not merge without judgement are filed as
// a review item of kind [retention.KindConflict]; approving one carries it
// out here ([applyConflict]).
func init() {
	retention.RegisterKind(retention.KindConflict, retention.KindHandler{
		Apply:    func(v *vault.Vault, it retention.Item, _ time.Time) (string, error) { return applyConflict(v, it) },
		Landed:   func(*vault.Vault, retention.Item) (string, bool) { return "", false }, // applying twice writes the same bytes
		Affected: func(it retention.Item) []string { return []string{it.Target} },
	})
}

// ArchiveDir is where conflict copies go once handled: the same folders
// as in the vault below it, the copy's name unchanged. Nothing there is
// ever deleted.
const ArchiveDir = vault.ArchiveDir + "/conflicts"

// conflictsLock serialises conflict resolution across processes (a serve's
// keeper and a 'doctor --fix').
const conflictsLock = "sync-conflicts"

// The kinds of file a [Conflict] concerns.
const (
	FileMemory     = "memory"     // agents/A/MEMORY.md
	FileUser       = "user"       // agents/A/USER.md
	FileIdentity   = "identity"   // agents/A/IDENTITY.md
	FileFact       = "fact"       // agents/A/memory/SLUG.md
	FileIndex      = "index"      // agents/A/memory/INDEX.md (derived from the facts)
	FileCheckpoint = "checkpoint" // agents/A/checkpoints/*.md
	FileReview     = "review"     // review/pending/ID.md
	FileArchived   = "archived"   // review/archive/ID.md
	FileConfig     = "config"     // .nexus/config.yaml
	FileFeed       = "feed"       // log/...: one writer each; reported, never touched
	FileNote       = "note"       // any other note: reported, never touched
)

// Conflict is one sign of a sync conflict that [Find] sees.
type Conflict struct {
	// Path is the vault-relative path of the conflict copy, or of the file
	// holding git conflict markers.
	Path string `json:"path"`
	// Original is the file Path is a version of (Path itself for markers).
	Original string `json:"original"`
	// Engine is the sync tool whose naming it has (vault.Engine*), "git"
	// for markers, or "sync" for a pending review item whose decision is
	// already archived (a sync tool brought back the pending file).
	Engine string `json:"engine"`
	// File is the kind of file (File* constants); Agent the agent whose
	// file it is, if any.
	File  string `json:"file"`
	Agent string `json:"agent,omitempty"`
	// Markers reports git conflict markers inside Path; Malformed that they
	// are not well formed (they cannot be split into two sides).
	Markers   bool `json:"markers,omitempty"`
	Malformed bool `json:"malformed,omitempty"`
	// OriginalMissing reports a copy whose original is gone.
	OriginalMissing bool `json:"original_missing,omitempty"`
}

// Mergeable reports whether [Resolve] handles the conflict (the
// others are reported only: feeds, a person's notes, broken markers).
func (c Conflict) Mergeable() bool {
	return c.File != FileFeed && c.File != FileNote && !c.Malformed
}

// ScanOptions choose what [Find] looks at.
type ScanOptions struct {
	// Notes extends the scan from Nexus's own files (agents/, review/,
	// log/ names, .nexus/config.yaml) to every visible folder of the vault,
	// and reads every markdown file there and in log/ for conflict markers.
	Notes bool
}

// Find lists the conflict copies and conflict markers in the
// vault. It only reads. Syncthing and Dropbox names are recognised
// anywhere; "NAME 2.md" and "NAME.orig" only beside a Nexus file with
// several writers (elsewhere they are ordinary names). Markers are looked
// for in the files with several writers, and with opts.Notes in every
// markdown file. Hidden folders (.obsidian/, .trash/, .git/) are skipped,
// and so is review/archive/conflicts/, where handled copies rest.
func Find(v *vault.Vault, opts ScanOptions) ([]Conflict, error) {
	return FindIn(v.Root(), opts)
}

// FindIn is [Find] for the vault rooted at root (an
// absolute path), which need not open: 'nexus doctor' looks for conflict
// markers in a config.yaml that no longer parses.
func FindIn(root string, opts ScanOptions) ([]Conflict, error) {
	s := &scanner{opts: opts, root: root}
	if err := s.scanNexus(); err != nil {
		return nil, err
	}
	if opts.Notes {
		if err := s.scanNotes(); err != nil {
			return nil, err
		}
	}
	sort.Slice(s.found, func(i, j int) bool { return s.found[i].Path < s.found[j].Path })
	return s.found, nil
}

type scanner struct {
	opts  ScanOptions
	root  string
	found []Conflict
}

func (s *scanner) abs(rel string) string { return filepath.Join(s.root, filepath.FromSlash(rel)) }

// dir looks at the files of one folder (vault-relative), not below it.
// markers says which files to read for conflict markers.
func (s *scanner) dir(rel string, markers func(name string) bool) ([]fs.DirEntry, error) {
	des, err := vault.ReadDir(s.abs(rel))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scan %s for conflict copies: %w", rel, err)
	}
	names := make(map[string]bool, len(des))
	for _, de := range des {
		names[de.Name()] = true
	}
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() || strings.HasPrefix(name, ".") && rel != vault.NexusDir {
			continue
		}
		p := path.Join(rel, name)
		if cn, strict, ok := vault.ParseConflictName(name); ok {
			orig := path.Join(rel, cn.Original)
			kind, agent := classify(orig)
			if strict || names[cn.Original] && multiWriter(kind) {
				s.found = append(s.found, Conflict{Path: p, Original: orig, Engine: cn.Engine, File: kind, Agent: agent, OriginalMissing: !names[cn.Original]})
				continue
			}
		}
		if markers != nil && markers(name) {
			s.markers(p)
		}
	}
	return des, nil
}

// markers reads one file and records its conflict markers, if any.
func (s *scanner) markers(rel string) {
	data, err := vault.ReadFile(s.abs(rel))
	if err != nil || !bytes.Contains(data, []byte("<<<<<<<")) {
		return
	}
	sides, ok, found := vault.SplitConflictMarkers(data)
	if !found || ok && sides.Conflicts == 0 {
		return
	}
	kind, agent := classify(rel)
	s.found = append(s.found, Conflict{Path: rel, Original: rel, Engine: vault.EngineGit, File: kind, Agent: agent, Markers: true, Malformed: !ok})
}

func isMarkdown(name string) bool { return strings.HasSuffix(strings.ToLower(name), ".md") }

func (s *scanner) scanNexus() error {
	if _, err := s.dir(vault.NexusDir, func(name string) bool { return name == "config.yaml" }); err != nil {
		return err
	}
	agentsDes, err := vault.ReadDir(s.abs(vault.AgentsDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("scan agents for conflict copies: %w", err)
	}
	for _, de := range agentsDes {
		if !de.IsDir() || identity.ValidName(de.Name()) != nil {
			continue
		}
		home := identity.Home(de.Name())
		for _, sub := range []string{home, home + "/" + agents.FactsDir, home + "/" + agents.CheckpointsDir} {
			if _, err := s.dir(sub, isMarkdown); err != nil {
				return err
			}
		}
	}
	if _, err := s.dir(vault.PendingDir, isMarkdown); err != nil {
		return err
	}
	// A pending item whose decision is archived: a sync tool brought the
	// pending file back (a change on one machine beat a decision on the
	// other).
	if des, err := vault.ReadDir(s.abs(vault.PendingDir)); err == nil {
		for _, de := range des {
			name := de.Name()
			if !de.Type().IsRegular() || !isMarkdown(name) || strings.HasPrefix(name, ".") || vault.IsConflictCopy(name) {
				continue
			}
			id := strings.TrimSuffix(name, ".md")
			if _, err := vault.Lstat(s.abs(retention.ArchivePath(id))); err == nil {
				s.found = append(s.found, Conflict{Path: retention.PendingPath(id), Original: retention.ArchivePath(id), Engine: "sync", File: FileReview})
			}
		}
	}
	if _, err := s.dir(vault.ArchiveDir, nil); err != nil {
		return err
	}
	var markLog func(string) bool
	if s.opts.Notes {
		markLog = isMarkdown
	}
	return s.walk("log", markLog, nil)
}

// walk scans rel and every visible folder below it, except those skip
// accepts.
func (s *scanner) walk(rel string, markers func(string) bool, skip func(string) bool) error {
	des, err := s.dir(rel, markers)
	if err != nil {
		return err
	}
	for _, de := range des {
		if !de.IsDir() || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		sub := path.Join(rel, de.Name())
		if rel == "." {
			sub = de.Name()
		}
		if skip != nil && skip(sub) {
			continue
		}
		if err := s.walk(sub, markers, skip); err != nil {
			return err
		}
	}
	return nil
}

// scanNotes scans the rest of the vault: every visible folder but those
// scanNexus covered.
func (s *scanner) scanNotes() error {
	skip := func(rel string) bool {
		return rel == vault.AgentsDir || rel == "log" || rel == vault.PendingDir || rel == vault.ArchiveDir
	}
	return s.walk(".", isMarkdown, skip)
}

// multiWriter reports whether a kind of file is written by more than one
// party (an agent and a person, or agents on several machines).
func multiWriter(kind string) bool {
	switch kind {
	case FileMemory, FileUser, FileIdentity, FileFact, FileIndex, FileCheckpoint, FileReview, FileArchived, FileConfig:
		return true
	}
	return false
}

// classify names the kind of a vault-relative path and its agent.
func classify(rel string) (kind, agent string) {
	parts := strings.Split(rel, "/")
	switch {
	case rel == vault.ConfigFile:
		return FileConfig, ""
	case len(parts) >= 3 && parts[0] == vault.AgentsDir:
		agent = parts[1]
		switch {
		case len(parts) == 3 && parts[2] == agents.MemoryFile:
			return FileMemory, agent
		case len(parts) == 3 && parts[2] == agents.UserFile:
			return FileUser, agent
		case len(parts) == 3 && parts[2] == "IDENTITY.md":
			return FileIdentity, agent
		case len(parts) == 4 && parts[2] == agents.FactsDir && parts[3] == "INDEX.md":
			return FileIndex, agent
		case len(parts) == 4 && parts[2] == agents.FactsDir && isMarkdown(parts[3]):
			return FileFact, agent
		case len(parts) == 4 && parts[2] == agents.CheckpointsDir:
			return FileCheckpoint, agent
		}
		return FileNote, agent
	case len(parts) == 3 && parts[0]+"/"+parts[1] == vault.PendingDir:
		return FileReview, ""
	case len(parts) == 3 && parts[0]+"/"+parts[1] == vault.ArchiveDir:
		return FileArchived, ""
	case parts[0] == "log":
		return FileFeed, ""
	}
	return FileNote, ""
}

// Resolution is what [Resolve] did with one conflict.
type Resolution struct {
	Conflict
	// Action is "merged" (the versions were merged into the file),
	// "archived" (nothing to merge: the versions agree, or the file already
	// holds the decision), "restored" (the copy was the only version left
	// and took the original's place), "filed" (a person decides: see
	// ReviewID) or "left" (not Nexus's to touch; see Detail).
	Action string `json:"action"`
	// Archived is where the conflict copy (or the file with markers, as it
	// was) now rests, under review/archive/conflicts/.
	Archived string `json:"archived,omitempty"`
	// ReviewID names the pending item filed for a person.
	ReviewID string `json:"review_id,omitempty"`
	// Detail says, in plain words, what was merged or why not.
	Detail string `json:"detail"`
}

// Report is the outcome of [Resolve].
type Report struct {
	// Resolved are the conflicts handled; Left those reported only.
	Resolved []Resolution `json:"resolved"`
	Left     []Resolution `json:"left"`
}

// Resolve finds the conflict copies and conflict markers of
// Nexus's files with several writers ([Find] without notes) and
// handles each, losing neither side:
//
//   - MEMORY.md, USER.md: the union of both versions' entries, within the
//     limit ([agents.Memory.Merge]); entries that do not fit wait in
//     review/pending/ as one memory item (approving adds them).
//   - review items: a decision made on one side wins over an undecided
//     other side; the same decision on both sides is kept once; two
//     different decisions put the item back to pending with the reason in
//     its error property; two different undecided texts file a conflict
//     item. A pending file whose decision is already archived is archived.
//   - IDENTITY.md, facts, checkpoints, config.yaml, archived items: equal
//     versions merge; different ones file a [retention.KindConflict] item (with git
//     markers the file keeps the first side meanwhile, so it parses).
//   - memory/INDEX.md: derived from the fact files, which the keeper
//     re-indexes; the copy is archived and markers resolve to the first
//     side.
//
// Every conflict copy, and every file with markers as it was, ends in
// review/archive/conflicts/ (never deleted); every write goes through the
// file's own lock and compare-and-swap. Feeds and a person's notes are
// left alone and reported. The outcome is the same on every machine that
// sees the same files, and a run interrupted at any step is finished by
// the next. Run it from the keeper loop (serve, watch) and from
// 'nexus doctor --fix'.
func Resolve(ctx context.Context, v *vault.Vault, now time.Time) (Report, error) {
	rep := Report{Resolved: []Resolution{}, Left: []Resolution{}}
	found, err := Find(v, ScanOptions{})
	if err != nil || len(found) == 0 {
		return rep, err
	}
	unlock, err := v.LockContext(ctx, conflictsLock)
	if err != nil {
		return rep, err
	}
	defer unlock()
	var errs []error
	for _, c := range found {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		r := Resolution{Conflict: c}
		var err error
		switch {
		case !c.Mergeable():
			r.Action = "left"
			r.Detail = leftReason(c)
		default:
			err = resolveOne(v, &r, now)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("resolve %s: %w", c.Path, err))
			continue
		}
		if r.Action == "left" {
			rep.Left = append(rep.Left, r)
		} else {
			rep.Resolved = append(rep.Resolved, r)
		}
	}
	return rep, errors.Join(errs...)
}

func leftReason(c Conflict) string {
	switch {
	case c.Malformed:
		return "the conflict markers are not well formed (a block without its ======= or >>>>>>> line), so the two sides cannot be told apart; edit the file by hand"
	case c.File == FileFeed:
		return "a log feed has one writer; a second version of it means the same writer appended on two machines (a fork), which 'nexus log verify' reports: keep both files"
	}
	return "not a Nexus file; merge it by hand and delete the copy"
}

func resolveOne(v *vault.Vault, r *Resolution, now time.Time) error {
	c := r.Conflict
	if c.Engine == "sync" {
		return resolveDecidedPending(v, r)
	}
	var copyData []byte
	if !c.Markers {
		data, err := vault.ReadFile(v.MustPath(c.Path))
		if errors.Is(err, fs.ErrNotExist) {
			r.Action, r.Detail = "archived", "the copy was handled meanwhile"
			return nil
		}
		if err != nil {
			return err
		}
		copyData = data
		if c.OriginalMissing {
			return restore(v, r, copyData)
		}
	}
	switch c.File {
	case FileMemory, FileUser:
		return resolveMemory(v, r, copyData, now)
	case FileReview:
		return resolveReview(v, r, copyData, now)
	default:
		return resolveGeneric(v, r, copyData, now)
	}
}

// restore puts a copy whose original is gone in its place: it is the only
// version left. A pending review item whose decision is archived is
// archived instead.
func restore(v *vault.Vault, r *Resolution, data []byte) error {
	c := r.Conflict
	if c.File == FileReview {
		id := strings.TrimSuffix(path.Base(c.Original), ".md")
		if _, err := vault.Lstat(v.MustPath(retention.ArchivePath(id))); err == nil {
			r.Action, r.Detail = "archived", "the item was decided already ("+retention.ArchivePath(id)+"); this copy of it is kept with the conflicts"
			return archiveCopy(v, r, data)
		}
	}
	err := vault.ReplaceIf(v.MustPath(c.Original), nil, data, 0o644)
	if err != nil && !errors.Is(err, vault.ErrConflict) {
		return err
	}
	if errors.Is(err, vault.ErrConflict) {
		// The original came back meanwhile: handle it next run.
		r.Action, r.Detail = "left", "the original reappeared while restoring; the next run merges the copy into it"
		return nil
	}
	r.Action, r.Detail = "restored", "the original was gone; the copy, the only version left, took its place"
	return removeIfSame(v.MustPath(c.Path), data)
}

// archiveCopy moves the conflict copy r.Path (whose bytes are data) to
// review/archive/conflicts/, under the same folders.
func archiveCopy(v *vault.Vault, r *Resolution, data []byte) error {
	dst, err := keep(v, r.Path, data)
	if err != nil {
		return err
	}
	r.Archived = dst
	return removeIfSame(v.MustPath(r.Path), data)
}

// keep writes data to review/archive/conflicts/REL (REL being a
// vault-relative path), or to a numbered name beside it if that holds
// other bytes, and returns where. Writing the same bytes again is a no-op,
// so a run interrupted after it repeats safely.
func keep(v *vault.Vault, rel string, data []byte) (string, error) {
	dir, name := path.Split(rel)
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 1; i < 100; i++ {
		dst := ArchiveDir + "/" + dir + name
		if i > 1 {
			dst = fmt.Sprintf("%s/%s%s-%d%s", ArchiveDir, dir, stem, i, ext)
		}
		p, err := v.Path(dst)
		if err != nil {
			return "", err
		}
		if cur, err := vault.ReadFile(p); err == nil {
			if bytes.Equal(cur, data) {
				return dst, nil
			}
			continue
		}
		if err := vault.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("create %s: %w", path.Dir(dst), err)
		}
		err = vault.ReplaceIf(p, nil, data, 0o644)
		if errors.Is(err, vault.ErrConflict) {
			i--
			continue
		}
		if err != nil {
			return "", fmt.Errorf("archive %s: %w", rel, err)
		}
		return dst, nil
	}
	return "", fmt.Errorf("archive %s: too many versions in %s", rel, ArchiveDir)
}

// removeIfSame removes path if it still holds data (a sync tool may have
// replaced it meanwhile: then it stays, for the next run).
func removeIfSame(p string, data []byte) error {
	cur, err := vault.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil || !bytes.Equal(cur, data) {
		return err
	}
	if err := vault.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return vault.SyncDir(filepath.Dir(p))
}

// markerName names the archived version of a file holding markers.
func markerName(rel string, data []byte) string {
	dir, name := path.Split(rel)
	sum := sha256.Sum256(data)
	return dir + vault.GitConflictName(name, hex.EncodeToString(sum[:4]))
}

// copyTime is the time a conflict copy is filed under: its modification
// time, which sync tools carry over, so every machine files the same item.
func copyTime(v *vault.Vault, rel string, now time.Time) time.Time {
	if st, err := vault.Stat(v.MustPath(rel)); err == nil {
		return st.ModTime().UTC().Truncate(time.Second)
	}
	return now.UTC().Truncate(time.Second)
}

func resolveMemory(v *vault.Vault, r *Resolution, copyData []byte, now time.Time) error {
	c := r.Conflict
	t := agents.TargetMemory
	if c.File == FileUser {
		t = agents.TargetUser
	}
	m, err := agents.OpenMemory(v, c.Agent, t)
	if err != nil {
		return err
	}
	var before []byte
	if c.Markers {
		before, _ = vault.ReadFile(v.MustPath(c.Path))
	}
	res, err := m.Merge(copyData)
	if err != nil {
		return err
	}
	if res.Unmergeable {
		r.Action, r.Detail = "left", leftReason(Conflict{Malformed: true})
		return nil
	}
	r.Action = "merged"
	r.Detail = fmt.Sprintf("%d entr%s of the other version added", len(res.Added), plural(len(res.Added), "y", "ies"))
	if len(res.Dropped) > 0 {
		r.Detail += fmt.Sprintf(", %d removed or replaced on one side dropped", len(res.Dropped))
	}
	if len(res.Left) > 0 {
		when := copyTime(v, c.Path, now)
		ops := make([]agents.Op, len(res.Left))
		for i, e := range res.Left {
			ops[i] = agents.Op{Action: agents.ActionAdd, Content: e}
		}
		it := retention.Item{Agent: c.Agent, Kind: retention.KindMemory, Status: retention.StatusPending, Target: string(t),
			Provenance: retention.Provenance{Agent: c.Agent, Time: when, Source: "sync conflict in " + c.Original}, Ops: ops}
		id, err := fileOnce(v, it, c.Original, []byte(strings.Join(res.Left, "\x00")))
		if err != nil {
			return err
		}
		r.Action, r.ReviewID = "filed", id
		r.Detail += fmt.Sprintf("; %d did not fit within the limit and wait in review as %s", len(res.Left), id)
	}
	if c.Markers {
		if before != nil {
			dst, err := keep(v, markerName(c.Path, before), before)
			if err != nil {
				return err
			}
			r.Archived = dst
		}
		return nil
	}
	return archiveCopy(v, r, copyData)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// fileOnce stages it under an id derived from what it is about, so that
// every machine (and every rerun) files it once.
func fileOnce(v *vault.Vault, it retention.Item, about string, content []byte) (string, error) {
	h := sha256.New()
	h.Write([]byte(it.Kind + "\x00" + about + "\x00"))
	h.Write(content)
	it.ID = "c-" + hex.EncodeToString(h.Sum(nil)[:4])
	it.Path = retention.PendingPath(it.ID)
	for _, p := range []string{retention.PendingPath(it.ID), retention.ArchivePath(it.ID)} {
		if _, err := vault.Lstat(v.MustPath(p)); err == nil {
			return it.ID, nil
		}
	}
	if err := vault.MkdirAll(v.MustPath(vault.PendingDir), 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", vault.PendingDir, err)
	}
	data, err := it.Render()
	if err != nil {
		return "", err
	}
	err = vault.ReplaceIf(v.MustPath(it.Path), nil, data, 0o644)
	if err != nil && !errors.Is(err, vault.ErrConflict) {
		return "", fmt.Errorf("file %s for review: %w", it.ID, err)
	}
	return it.ID, nil
}

// resolveDecidedPending archives a pending file whose decision is already
// in review/archive/.
func resolveDecidedPending(v *vault.Vault, r *Resolution) error {
	unlock, err := v.Lock(retention.ReviewLock)
	if err != nil {
		return err
	}
	defer unlock()
	data, err := vault.ReadFile(v.MustPath(r.Path))
	if errors.Is(err, fs.ErrNotExist) {
		r.Action, r.Detail = "archived", "handled meanwhile"
		return nil
	}
	if err != nil {
		return err
	}
	r.Action, r.Detail = "archived", "the item was decided already ("+r.Original+"); a sync tool brought its pending file back, which is kept with the conflicts"
	return archiveCopy(v, r, data)
}

// resolveReview merges two versions of a pending review item.
func resolveReview(v *vault.Vault, r *Resolution, copyData []byte, now time.Time) error {
	c := r.Conflict
	unlock, err := v.Lock(retention.ReviewLock)
	if err != nil {
		return err
	}
	defer unlock()
	p := v.MustPath(c.Original)
	id := strings.TrimSuffix(path.Base(c.Original), ".md")
	live, err := vault.ReadStable(p)
	if errors.Is(err, fs.ErrNotExist) {
		// Decided meanwhile (under the review lock, so for good).
		if copyData == nil {
			r.Action, r.Detail = "archived", "handled meanwhile"
			return nil
		}
		return restore(v, r, copyData)
	}
	if err != nil {
		return err
	}
	mine, other, ok := sidesFor(r, live, copyData)
	if !ok {
		r.Action, r.Detail = "left", leftReason(Conflict{Malformed: true})
		return nil
	}
	a, aerr := retention.ParseItem(id, mine)
	b, berr := retention.ParseItem(id, other)
	if aerr != nil || berr != nil {
		return resolveGenericLocked(v, r, live, copyData, now)
	}
	decidedA := a.Status == retention.StatusApproved || a.Status == retention.StatusRejected
	decidedB := b.Status == retention.StatusApproved || b.Status == retention.StatusRejected
	result := mine
	switch {
	case bytes.Equal(normEOL(mine), normEOL(other)):
		r.Action, r.Detail = "archived", "both versions are the same"
	case !decidedA && decidedB:
		result = other
		r.Action, r.Detail = "merged", "decided "+b.Status+" on one side and undecided on the other: the decision is kept (and carried out by the next reconcile)"
	case decidedA && !decidedB:
		r.Action, r.Detail = "merged", "decided "+a.Status+" on one side and undecided on the other: the decision is kept"
	case decidedA && decidedB && a.Status == b.Status:
		r.Action, r.Detail = "merged", "decided "+a.Status+" on both sides: kept once"
	case decidedA && decidedB:
		reason := fmt.Sprintf("decided %s (by %s) on one machine and %s (by %s) on another; decide again", a.Status, orDash(a.DecidedBy), b.Status, orDash(b.DecidedBy))
		if result, err = vault.SetProperty(mine, "status", retention.StatusPending); err == nil {
			result, err = vault.SetProperty(result, "error", reason)
		}
		if err != nil {
			return err
		}
		r.Action, r.Detail = "filed", reason
		r.ReviewID = id
	case a.Body == b.Body:
		r.Action, r.Detail = "merged", "undecided on both sides with the same text; this machine's properties are kept"
	default:
		altData := copyData
		if c.Markers {
			altData = live
		}
		if err := fileConflict(v, r, mine, other, altData, now); err != nil {
			return err
		}
	}
	if c.Markers {
		dst, err := keep(v, markerName(c.Path, live), live)
		if err != nil {
			return err
		}
		r.Archived = dst
	}
	if !bytes.Equal(result, live) {
		if err := vault.ReplaceIf(p, live, result, 0o644); err != nil {
			if errors.Is(err, vault.ErrConflict) {
				r.Action, r.Detail = "left", "the item changed while merging; the next run tries again"
				return nil
			}
			return err
		}
	}
	if c.Markers {
		return nil
	}
	return archiveCopy(v, r, copyData)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func normEOL(b []byte) []byte {
	return bytes.TrimSpace(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")))
}

// lockFor names the lock the write path of a file takes.
func lockFor(rel string) string {
	kind, agent := classify(rel)
	switch kind {
	case FileConfig:
		return "config"
	case FileIdentity:
		return "identity-" + agent
	case FileFact, FileIndex:
		return agents.HomePath(agent, agents.FactsDir)
	case FileCheckpoint:
		return "checkpoint-" + agent
	case FileReview, FileArchived:
		return retention.ReviewLock
	}
	return rel
}

func resolveGeneric(v *vault.Vault, r *Resolution, copyData []byte, now time.Time) error {
	unlock, err := v.Lock(lockFor(r.Original))
	if err != nil {
		return err
	}
	defer unlock()
	live, err := vault.ReadStable(v.MustPath(r.Original))
	if errors.Is(err, fs.ErrNotExist) && copyData != nil {
		return restore(v, r, copyData)
	}
	if err != nil {
		return err
	}
	return resolveGenericLocked(v, r, live, copyData, now)
}

// sidesFor returns the two versions at stake: the file's (mine) and the
// other. For a file with markers they are git's two sides; a conflict copy
// that itself holds markers (a config set aside by 'doctor --fix') stands
// for its second side. ok is false for markers that are not well formed.
func sidesFor(r *Resolution, live, copyData []byte) (mine, other []byte, ok bool) {
	if r.Markers {
		sides, ok, _ := vault.SplitConflictMarkers(live)
		return sides.Ours, sides.Theirs, ok
	}
	if sides, ok, found := vault.SplitConflictMarkers(copyData); found {
		return live, sides.Theirs, ok
	}
	return live, copyData, true
}

// resolveGenericLocked handles two versions of a file that do not merge by
// themselves; the file's lock is held. live is the file's bytes as read,
// copyData the conflict copy's (nil for markers).
func resolveGenericLocked(v *vault.Vault, r *Resolution, live, copyData []byte, now time.Time) error {
	mine, other, ok := sidesFor(r, live, copyData)
	if !ok {
		r.Action, r.Detail = "left", leftReason(Conflict{Malformed: true})
		return nil
	}
	altData := copyData
	if r.Markers {
		altData = live
	}
	switch {
	case bytes.Equal(normEOL(mine), normEOL(other)):
		r.Action, r.Detail = "archived", "both versions are the same"
	case r.File == FileIndex:
		r.Action, r.Detail = "merged", "the memory index is rebuilt from the fact files; this machine's version is kept meanwhile"
	default:
		if err := fileConflict(v, r, mine, other, altData, now); err != nil {
			return err
		}
	}
	if r.Markers {
		dst, err := keep(v, markerName(r.Path, live), live)
		if err != nil {
			return err
		}
		r.Archived = dst
		err = vault.ReplaceIf(v.MustPath(r.Path), live, mine, 0o644)
		if errors.Is(err, vault.ErrConflict) {
			r.Action, r.Detail = "left", "the file changed while merging; the next run tries again"
			return nil
		}
		return err
	}
	return archiveCopy(v, r, copyData)
}

// fileConflict archives altData (the conflict copy, or the file with its
// markers) and files a KindConflict item naming it; approving it puts the
// other version (the copy, or git's second side) in place of the file.
func fileConflict(v *vault.Vault, r *Resolution, mine, other, altData []byte, now time.Time) error {
	c := r.Conflict
	altRel := c.Path
	if c.Markers {
		altRel = markerName(c.Path, altData)
	}
	alt, err := keep(v, altRel, altData)
	if err != nil {
		return err
	}
	r.Archived = alt
	it := retention.Item{Agent: c.Agent, Kind: retention.KindConflict, Status: retention.StatusPending, Target: c.Original,
		Provenance:  retention.Provenance{Agent: orDash(c.Agent), Time: copyTime(v, c.Path, now), Source: alt},
		Name:        "Two versions of " + c.Original,
		Description: "a sync tool (" + c.Engine + ") left two versions that differ; a person picks one",
		Body:        conflictBody(c, alt, mine, other)}
	id, err := fileOnce(v, it, c.Original, other)
	if err != nil {
		return err
	}
	r.Action, r.ReviewID = "filed", id
	r.Detail = "the versions differ; the file keeps this machine's, and " + id + " in review/pending/ holds the choice"
	return nil
}

// conflictBody explains a conflict item to the person deciding it.
func conflictBody(c Conflict, alt string, mine, other []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s exists in two versions. The file keeps this one; the other is [[%s]].\n\n", c.Original, strings.TrimSuffix(alt, ".md"))
	b.WriteString("- Set `status: approved` to put the other version in its place.\n")
	b.WriteString("- Set `status: rejected` to keep the file as it is (edit it first to take parts of both).\n\n")
	b.WriteString("Lines only in the file:\n\n")
	writeOnly(&b, mine, other)
	b.WriteString("\nLines only in the other version:\n\n")
	writeOnly(&b, other, mine)
	return b.String()
}

// writeOnly lists, in a fenced block, the lines of a that b lacks (at most
// 40).
func writeOnly(b *strings.Builder, a, other []byte) {
	have := map[string]bool{}
	for _, l := range strings.Split(string(normEOL(other)), "\n") {
		have[l] = true
	}
	b.WriteString("```\n")
	n := 0
	for _, l := range strings.Split(string(normEOL(a)), "\n") {
		if have[l] || strings.TrimSpace(l) == "" {
			continue
		}
		if n++; n > 40 {
			b.WriteString("…\n")
			break
		}
		b.WriteString(strings.ReplaceAll(l, "```", "'''") + "\n")
	}
	b.WriteString("```\n")
}

// applyConflict carries out an approved KindConflict item: the archived
// other version replaces the file.
func applyConflict(v *vault.Vault, it retention.Item) (string, error) {
	alt := it.Provenance.Source
	if !strings.HasPrefix(alt, ArchiveDir+"/") {
		return "", fmt.Errorf("item %s: its source %q is not under %s: %w", it.ID, alt, ArchiveDir, vault.ErrInvalid)
	}
	altPath, err := v.Path(alt)
	if err != nil {
		return "", err
	}
	data, err := vault.ReadFile(altPath)
	if err != nil {
		return "", fmt.Errorf("read the other version %s: %w", alt, err)
	}
	if sides, ok, found := vault.SplitConflictMarkers(data); found && ok {
		data = sides.Theirs
	}
	target, err := v.Path(it.Target)
	if err != nil {
		return "", err
	}
	if kind, _ := classify(it.Target); !multiWriter(kind) {
		return "", fmt.Errorf("item %s: %s is not a file Nexus merges: %w", it.ID, it.Target, vault.ErrInvalid)
	}
	unlock, err := v.Lock(lockFor(it.Target))
	if err != nil {
		return "", err
	}
	defer unlock()
	for attempt := 0; ; attempt++ {
		cur, err := vault.ReadStable(target)
		if errors.Is(err, fs.ErrNotExist) {
			cur = nil
		} else if err != nil {
			return "", err
		}
		err = vault.ReplaceIf(target, cur, data, 0o644)
		if errors.Is(err, vault.ErrConflict) && attempt < vault.CASAttempts {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("write %s: %w", it.Target, err)
		}
		return it.Target, nil
	}
}

// Keep runs [Resolve] for a keeper and logs what it did: 'nexus watch' and
// 'nexus serve' start theirs with [retention.KeeperOptions.Before] set to
// it.
func Keep(v *vault.Vault, now time.Time, log *slog.Logger) {
	rep, err := Resolve(context.Background(), v, now)
	for _, r := range rep.Resolved {
		log.Info("sync conflict handled", "file", r.Original, "copy", r.Path, "action", r.Action, "detail", r.Detail, "archived", r.Archived, "review", r.ReviewID)
	}
	if err != nil {
		log.Warn("resolve sync conflicts", "err", err)
	}
}
