package agents

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/nexus-memory/nexus/vault"
)

// MergeResult reports what [Memory.Merge] did.
type MergeResult struct {
	// Added are the entries of the other version (the other side of git
	// conflict markers, or the conflict copy) that the file now holds.
	Added []string `json:"added,omitempty"`
	// Dropped are entries the common ancestor held that one side removed
	// or replaced (only when git wrote the ancestor: diff3 style).
	Dropped []string `json:"dropped,omitempty"`
	// Left are entries of the other version that did not fit within the
	// limit; the file does not hold them, and the caller files them for a
	// person's review.
	Left []string `json:"left,omitempty"`
	// Markers reports that the file held git conflict markers, which the
	// merge removed.
	Markers bool `json:"markers,omitempty"`
	// Unmergeable reports that the file holds conflict markers that are not
	// well formed; nothing was written.
	Unmergeable bool `json:"unmergeable,omitempty"`
	// Changed reports that the file was rewritten.
	Changed bool `json:"changed"`
	// Backup is the vault-relative path of the copy kept of the file's
	// previous bytes when they were not canonical (markers, CRLF, ...).
	Backup string `json:"backup,omitempty"`
}

// Merge merges another version of the file into it, without judgement:
// the union of the entries of both, the file's own first, each entry once.
// other is the content of a sync tool's conflict copy, or nil to resolve
// only git conflict markers inside the file itself.
//
// Git conflict markers in the file (and in other) are split into their two
// sides, and both sides' entries are kept; where git wrote the common
// ancestor (merge.conflictStyle diff3), an entry the ancestor held and one
// side removed or replaced is dropped, as a three-way merge does. Entries
// of the other side are added, in their order, only while the file stays
// within its limit; the rest are returned in Left for a person to decide
// (the file's own entries are never dropped for the limit). The entries'
// text is kept as it is: both versions were in the file, written by an
// agent through the scan or typed by a person.
//
// The write takes the file's lock, re-reads it, and replaces it with a
// compare-and-swap exactly as [Memory.Apply] does, backing up bytes that
// would not survive the rewrite. A file whose markers are not well formed
// is left alone (Unmergeable).
func (m *Memory) Merge(other []byte) (MergeResult, error) {
	if err := vault.MkdirAll(filepath.Dir(m.path), 0o755); err != nil {
		return MergeResult{}, fmt.Errorf("create %s: %w", filepath.ToSlash(filepath.Dir(m.rel)), err)
	}
	unlock, err := m.v.Lock(m.rel)
	if err != nil {
		return MergeResult{}, err
	}
	defer unlock()
	unlockHermes, err := m.hermesLock()
	if err != nil {
		return MergeResult{}, err
	}
	defer unlockHermes()
	var (
		backup   string
		backedUp []byte
	)
	for attempt := 1; ; attempt++ {
		raw, err := m.read()
		if err != nil {
			return MergeResult{}, err
		}
		res, after, ok := m.mergePlan(raw, other)
		if !ok {
			res.Unmergeable = true
			return res, nil
		}
		canonical := string(FormatEntries(after))
		res.Changed = raw == nil && len(after) > 0 || raw != nil && canonical != trimFinalNewline(string(raw))
		if !res.Changed {
			return res, nil
		}
		// Back up what the rewrite does not keep: the markers (both sides
		// and the ancestor as git wrote them), or a person's layout.
		drift := raw != nil && (res.Markers || string(FormatEntries(dedupeEntries(ParseEntries(raw)))) != trimFinalNewline(string(raw)))
		if drift && (backedUp == nil || string(backedUp) != string(raw)) {
			if backup, err = m.backup(raw); err != nil {
				return res, err
			}
			backedUp = raw
		}
		if testHookBeforeReplace != nil {
			testHookBeforeReplace(m.path)
		}
		err = vault.ReplaceIf(m.path, raw, FormatEntries(after), 0o644)
		if errors.Is(err, vault.ErrConflict) && attempt < maxCASAttempts {
			continue
		}
		if !vault.Written(err) {
			return res, fmt.Errorf("write %s: %w", m.rel, err)
		}
		res.Backup = backup
		return res, nil
	}
}

func trimFinalNewline(s string) string {
	if len(s) > 0 && s[len(s)-1] == '\n' {
		return s[:len(s)-1]
	}
	return s
}

// mergePlan computes the merged entries of raw (the file) and other (a
// conflict copy, or nil). ok is false when either holds markers that are
// not well formed.
func (m *Memory) mergePlan(raw, other []byte) (res MergeResult, after []string, ok bool) {
	own, extra, dropped, markers, ok := sidesOf(raw)
	if !ok {
		return res, nil, false
	}
	res.Markers = markers
	res.Dropped = dropped
	if other != nil {
		o1, o2, _, _, ok := sidesOf(other)
		if !ok {
			return res, nil, false
		}
		extra = append(append(extra, o1...), o2...)
	}
	after = dedupeEntries(own)
	for _, e := range extra {
		if slices.Contains(after, e) || slices.Contains(res.Left, e) {
			continue
		}
		if CharCount(append(after[:len(after):len(after)], e)) > m.limit {
			res.Left = append(res.Left, e)
			continue
		}
		after = append(after, e)
		res.Added = append(res.Added, e)
	}
	return res, after, true
}

// sidesOf splits a bounded-memory file into its entries. For a file with
// git conflict markers, own is the first side's entries (and the text
// outside the conflicts), extra the second side's entries not in the
// first, and dropped what a three-way merge removes (entries of the
// ancestor that one side no longer has). ok is false for markers that are
// not well formed.
func sidesOf(data []byte) (own, extra, dropped []string, markers, ok bool) {
	s, wellFormed, found := vault.SplitConflictMarkers(data)
	if !found {
		return ParseEntries(data), nil, nil, false, true
	}
	if !wellFormed {
		return nil, nil, nil, true, false
	}
	ours, theirs := dedupeEntries(ParseEntries(s.Ours)), dedupeEntries(ParseEntries(s.Theirs))
	var base []string
	if s.Base != nil {
		base = dedupeEntries(ParseEntries(s.Base))
	}
	gone := func(e string) bool {
		// In the ancestor and missing from one side: that side removed
		// (or replaced) it.
		return slices.Contains(base, e) && (!slices.Contains(ours, e) || !slices.Contains(theirs, e))
	}
	for _, e := range ours {
		if gone(e) {
			dropped = append(dropped, e)
			continue
		}
		own = append(own, e)
	}
	for _, e := range theirs {
		if slices.Contains(ours, e) {
			continue
		}
		if gone(e) {
			dropped = append(dropped, e)
			continue
		}
		extra = append(extra, e)
	}
	return own, extra, dedupeEntries(dropped), true, true
}

// parseEntriesMerged is [ParseEntries] for a file that may hold git
// conflict markers: both sides' entries, the first side's first, with what
// a three-way merge removes left out. Markers that are not well formed are
// read as text, as before.
func parseEntriesMerged(data []byte) []string {
	own, extra, _, markers, ok := sidesOf(data)
	if !markers || !ok {
		return ParseEntries(data)
	}
	return append(own, extra...)
}
