package index

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/nexus-memory/nexus/index/markdown"
	"github.com/nexus-memory/nexus/vault"
)

// Section is a piece of a note as search by meaning embeds it (SPEC §5,
// "Recall by meaning"): a short note whole, a long one (over splitRunes
// of text) cut at its headings of levels 1-3, as its hit's spans are.
// Log entries and decisions have none.
type Section struct {
	Path    string // the note's path as on disk, as a Hit's
	Line    int    // 1-based line where the section starts
	EndLine int    // its last line
	Text    string // its plain text, headings included
}

// SectionLister lists the sections of a vault's notes, re-reading only the
// notes whose size or modification time changed since its last List: the
// first List parses every note (as a rebuild does), the next ones cost a
// walk of the folders.
type SectionLister struct {
	v     *vault.Vault
	mu    sync.Mutex
	cache map[string]listedNote // by on-disk path
}

type listedNote struct {
	st   fileState
	secs []Section
}

// NewSectionLister returns a lister of v's sections.
func NewSectionLister(v *vault.Vault) *SectionLister {
	return &SectionLister{v: v, cache: map[string]listedNote{}}
}

// maxSectionFile is the largest note whose sections are listed (the
// index's default MaxFileBytes).
const maxSectionFile = 32 << 20

// List returns every section of every note, by path then line. A note
// that cannot be read is left out (the word index warns about it).
func (l *SectionLister) List(ctx context.Context) ([]Section, error) {
	files, err := walkTree(ctx, l.v.Root(), "", 0)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	kept := files.byKey()
	next := make(map[string]listedNote, len(kept))
	for _, f := range kept {
		if logKind(f.key) != KindNote {
			continue
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if old, ok := l.cache[f.disk]; ok && old.st.same(f.st, f.st.Disk) {
			next[f.disk] = old
			continue
		}
		if f.st.Size > maxSectionFile {
			continue
		}
		data, err := vault.ReadFile(filepath.Join(l.v.Root(), filepath.FromSlash(f.disk)))
		if err != nil {
			continue
		}
		next[f.disk] = listedNote{st: f.st, secs: noteSections(f.disk, markdown.Parse(f.key, data))}
	}
	l.cache = next
	paths := make([]string, 0, len(next))
	n := 0
	for p, ln := range next {
		paths = append(paths, p)
		n += len(ln.secs)
	}
	sort.Strings(paths)
	out := make([]Section, 0, n)
	for _, p := range paths {
		out = append(out, next[p].secs...)
	}
	return out, nil
}

// noteSections cuts a parsed note into the sections to embed: the whole
// text when it is short, else one per heading of levels 1-3. The file
// name and the frontmatter are not part of any: a rename changes no
// section's text, so it embeds nothing again.
func noteSections(disk string, n *markdown.Note) []Section {
	total := 0
	for _, s := range n.Sections {
		total += utf8.RuneCountInString(s.Text)
	}
	groups := [][]markdown.Section{n.Sections}
	if total > splitRunes {
		groups = group(n.Sections, 3)
	}
	var out []Section
	for _, g := range groups {
		var parts []string
		for _, s := range g {
			if s.Heading != "" {
				parts = append(parts, s.Heading)
			}
			if t := strings.TrimSpace(s.Text); t != "" {
				parts = append(parts, t)
			}
		}
		if len(parts) == 0 {
			continue
		}
		out = append(out, Section{Path: disk, Line: g[0].Line, EndLine: g[len(g)-1].EndLine, Text: strings.Join(parts, "\n")})
	}
	return out
}
