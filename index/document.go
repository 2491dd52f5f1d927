package index

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/mapping"

	"github.com/nexus-memory/nexus/index/holder"
	"github.com/nexus-memory/nexus/index/markdown"
	"github.com/nexus-memory/nexus/internal/dates"
	"github.com/nexus-memory/nexus/livelog"
)

// maxPairedBody is the longest body (in bytes of plain text) indexed with
// its word pairs. A longer one, a pasted log of megabytes with no
// headings, goes in the longbody field, words only: its pairs are
// mostly each a term of its own, and the index writer's memory grows
// with the terms of a segment (a 4 MB note of random words took 417 MB
// to index, a 16 MB one 1.6–2.5 GB). Such a document is still found by
// every word, ranked on the "all" field; a phrase or the "together"
// ranking holds for it as its words, in any order (docs/search.md).
const maxPairedBody = 256 << 10

// splitRunes is the note length (in code points of plain text) above which
// a note records its heading sections (levels 1-3) as spans, so that its
// hit is shown at its best section (see [Index.bestSection]). A note is
// one document whatever its length: "every word" is checked over the
// whole note, and a long note is one hit (SPEC §5, "Results are notes").
const splitRunes = 2000

// Document kinds.
const (
	KindNote     = holder.KindNote
	KindLog      = holder.KindLog      // one live-log entry (log/live/YYYY-MM/WRITER.md, log/live/YYYY-MM.md)
	KindDecision = holder.KindDecision // one decision (log/decisions/WRITER.md, log/decisions.md)
)

// doc is one search document: a whole note, a log entry or a decision. Field names are the index's field names.
type doc struct {
	Path     string    `json:"path"`
	Line     int       `json:"line"`
	End      int       `json:"end"`
	Title    string    `json:"title"`
	Aliases  string    `json:"aliases"`
	Heading  string    `json:"heading"`
	Spans    string    `json:"spans,omitempty"` // a long note's sections: "LINE END HEADING" lines (see splitRunes)
	Names    []string  `json:"name"`            // title, file name and aliases as their terms, for "the query is its name"
	Headings string    `json:"headings"`
	TagText  string    `json:"tagtext"`
	Tags     []string  `json:"tag"`
	Body     string    `json:"body"`
	LongBody string    `json:"longbody"`       // the body of a document too long for word pairs (see maxPairedBody)
	Props    string    `json:"props"`          // the other frontmatter values, links as text
	PropKV   []string  `json:"prop"`           // "key:" and "key:term" of every property, for prop:key:value
	All      string    `json:"all"`            // title, aliases, tags, headings, properties and body: for "every word must occur"
	Disk     string    `json:"disk,omitempty"` // on-disk path when it differs from Path (an NFD name)
	Agent    string    `json:"agent"`
	Type     string    `json:"type"`
	Kind     string    `json:"kind"`
	Date     time.Time `json:"date"`
}

func (d *doc) id() string { return d.Path + "#" + strconv.Itoa(d.Line) }

var (
	rfc3339Re  = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d)`)
	agentRe    = regexp.MustCompile(`(?i)\bagent\W{0,4}\s*([a-z0-9][a-z0-9_-]{0,63})`)
	agentDirRe = regexp.MustCompile(`^agents/([^/]+)/`)
)

// logKind says whether a vault path is a file of the log (a feed, a
// month file or an older vault's segment, as livelog reads them), whose
// blocks are each a document, and which log.
func logKind(rel string) string {
	switch {
	case !livelog.IsLogFile(rel):
		return KindNote
	case rel == "log/decisions.md" || strings.HasPrefix(rel, livelog.DecisionsDir+"/"):
		return KindDecision
	}
	return KindLog
}

// buildDocs turns one parsed note into its search documents. rel is its
// NFC key, disk its path as on disk; mtime is the fallback date. Files of
// the log are made into documents by logDocs instead.
func buildDocs(rel, disk string, n *markdown.Note, mtime time.Time) []doc {
	kind := KindNote
	props, kv := propFields(n.Props)
	tags := foldKeys(n.Tags)
	base := doc{
		Path:    rel,
		Props:   props,
		PropKV:  kv,
		Title:   n.Title,
		Aliases: strings.Join(n.Aliases, "\n"),
		Tags:    tags,
		TagText: strings.Join(tags, " "),
		Agent:   propString(n.Props, "agent", "author"),
		Type:    foldKey(propString(n.Props, "type")),
		Kind:    kind,
		Date:    propTime(n.Props, "updated", "date", "created"),
	}
	if disk != rel {
		base.Disk = disk
	}
	if base.Agent == "" {
		if m := agentDirRe.FindStringSubmatch(rel); m != nil {
			base.Agent = m[1]
		}
	}
	base.Agent = foldKey(base.Agent)
	if base.Date.IsZero() {
		base.Date = mtime.UTC()
	}
	if name := fileTitle(rel); !hasName(n, name) {
		// The file name is always a title (SPEC §5), also when the
		// first heading says something else: found by title: and in
		// the title tier as an alias is.
		base.Aliases = strings.TrimPrefix(base.Aliases+"\n"+name, "\n")
	}
	base.Names = names(base.Title, base.Aliases)
	d := base
	if len(n.Sections) == 0 {
		// All frontmatter: found by its title, aliases, tags and
		// property values like any other note; its lines are the
		// frontmatter's.
		d.Line, d.End = 1, max(1, n.BodyLine-1)
		d.All = strings.Join([]string{d.Title, d.Aliases, d.TagText, d.Props}, "\n")
		return []doc{d}
	}
	total := 0
	var heads, body []string
	for _, s := range n.Sections {
		total += utf8.RuneCountInString(s.Text)
		if s.Heading != "" {
			heads = append(heads, s.Heading)
		}
		if s.Text != "" {
			body = append(body, s.Text)
		}
	}
	d.Line, d.End = 1, n.Sections[len(n.Sections)-1].EndLine
	d.Heading = n.Sections[0].Heading
	if total > splitRunes {
		if groups := group(n.Sections, 3); len(groups) > 1 {
			d.Spans = spansText(groups)
		}
	}
	d.Headings = strings.Join(heads, "\n")
	d.Body = strings.Join(body, "\n")
	d.All = strings.Join([]string{d.Title, d.Aliases, d.TagText, d.Props, d.Headings, d.Body}, "\n")
	if len(d.Body) > maxPairedBody {
		d.Body, d.LongBody = "", d.Body
	}
	return []doc{d}
}

// fileTitle is a note's file name without its folder and ".md".
func fileTitle(rel string) string {
	base := path.Base(rel)
	return strings.TrimSuffix(base, path.Ext(base))
}

// hasName reports whether name is already n's title or one of its
// aliases, as the index reads them (case and accents aside).
func hasName(n *markdown.Note, name string) bool {
	key := nameKey(name)
	if key == "" || nameKey(n.Title) == key {
		return true
	}
	for _, a := range n.Aliases {
		if nameKey(a) == key {
			return true
		}
	}
	return false
}

// names are the name keys of a title and of aliases ("\n"-separated).
func names(title, aliases string) []string {
	var out []string
	for _, s := range append([]string{title}, strings.Split(aliases, "\n")...) {
		if k := nameKey(s); k != "" && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// nameKey is a name as its index terms, space-separated: a query whose
// words give the same key is the name, whatever its case, accents or
// punctuation ("kevin kelly" is "Kevin Kelly"; "resume" is "Résumé").
func nameKey(s string) string {
	return strings.Join(analyzedTerms(s), " ")
}

// spansText records a long note's section groups for [parseSpans].
func spansText(groups [][]markdown.Section) string {
	var b strings.Builder
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%d %d %s\n", g[0].Line, g[len(g)-1].EndLine, strings.ReplaceAll(g[0].Heading, "\n", " "))
	}
	return b.String()
}

// span is one section group of a long note: its lines and its heading.
type span struct {
	line, end int
	heading   string
}

// parseSpans reads what spansText wrote (nothing for a note without
// sections; a malformed line is skipped).
func parseSpans(s string) []span {
	var out []span
	for l := range strings.Lines(s) {
		f := strings.SplitN(strings.TrimSuffix(l, "\n"), " ", 3)
		if len(f) < 2 {
			continue
		}
		line, err1 := strconv.Atoi(f[0])
		end, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			continue
		}
		sp := span{line: line, end: end}
		if len(f) == 3 {
			sp.heading = f[2]
		}
		out = append(out, sp)
	}
	return out
}

// ownFields are the properties indexed in fields of their own (title,
// aliases, tags), left out of the props text.
var ownFields = map[string]bool{"title": true, "aliases": true, "alias": true, "tags": true, "tag": true}

// propFields returns the text of the frontmatter values (other than
// ownFields), and the prop terms: "key:" for every key and "key:TERM" for
// every analysed term of its value (keys lower-cased), which prop:key:value
// queries match.
func propFields(props map[string]any) (text string, kv []string) {
	if len(props) == 0 {
		return "", nil
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var texts []string
	seen := map[string]bool{}
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			kv = append(kv, t)
		}
	}
	for _, k := range keys {
		v := markdown.PropertyText(props[k])
		lk := foldKey(strings.TrimSpace(k))
		if lk == "" {
			continue
		}
		// Only the keys markdown reads as the title, aliases and tags
		// are left out, exactly as written (Title and ti<U+00AD>tle are
		// not the title).
		own := ownFields[k]
		add(lk + ":")
		for _, t := range analyzedTerms(v) {
			add(lk + ":" + t)
		}
		if !own && v != "" {
			texts = append(texts, v)
		}
	}
	return strings.Join(texts, "\n"), kv
}

// foldKeys is foldKey of each of keys, which it leaves as they are when
// folding changes none.
func foldKeys(keys []string) []string {
	for i, k := range keys {
		if f := foldKey(k); f != k {
			out := slices.Clone(keys)
			for j := i; j < len(out); j++ {
				out[j] = foldKey(out[j])
			}
			return out
		}
	}
	return keys
}

// group cuts sections into runs that start at each heading of level 1..max
// (deeper headings stay with their parent).
func group(secs []markdown.Section, max int) [][]markdown.Section {
	var out [][]markdown.Section
	for _, s := range secs {
		if len(out) == 0 || (s.Level >= 1 && s.Level <= max) {
			out = append(out, []markdown.Section{s})
			continue
		}
		out[len(out)-1] = append(out[len(out)-1], s)
	}
	if len(out) == 0 {
		out = append(out, nil)
	}
	return out
}

func firstLines(s string, n int) string {
	for i, c := 0, 0; i < len(s); i++ {
		if s[i] == '\n' {
			c++
			if c == n {
				return s[:i]
			}
		}
	}
	return s
}

func propString(props map[string]any, keys ...string) string {
	for _, k := range keys {
		switch v := props[k].(type) {
		case string:
			if s := strings.TrimSpace(v); s != "" {
				return strings.Trim(s, "[]\"' ")
			}
		case []any:
			if len(v) > 0 {
				if s, ok := v[0].(string); ok {
					return strings.Trim(strings.TrimSpace(s), "[]\"' ")
				}
			}
		}
	}
	return ""
}

// propTime reads a date property: a YAML timestamp, or text in one of
// internal/dates' layouts (the ones --since and --until take).
func propTime(props map[string]any, keys ...string) time.Time {
	for _, k := range keys {
		switch v := props[k].(type) {
		case time.Time:
			return v.UTC()
		case string:
			if t, err := dates.Parse(v); err == nil {
				return t
			}
		}
	}
	return time.Time{}
}

// mapDoc maps d as the index mapping m does, less the fields whose value
// is empty. The mapping gives every field of doc a value; an empty
// keyword field (no agent, no type, no on-disk path of its own) would be
// indexed as the term "" in every document, and stored, at a cost in
// every rebuild and in every segment, for a term no query asks for; an
// empty text field has no terms at all. Rebuilds and syncs both map
// through here, so the two make the same index.
func mapDoc(m mapping.IndexMapping, d *doc) (*document.Document, error) {
	bd := document.NewDocument(d.id())
	if err := m.MapDocument(bd, d); err != nil {
		return nil, err
	}
	bd.Fields = slices.DeleteFunc(bd.Fields, func(f document.Field) bool { return len(f.Value()) == 0 })
	return bd, nil
}
