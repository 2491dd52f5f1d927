package markdown

import (
	"bytes"
	"fmt"
	"html"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/vault"
)

// Note is a parsed note.
type Note struct {
	// Title is the frontmatter "title", else the first H1, else the file
	// name without ".md".
	Title string
	// Aliases are the frontmatter "aliases" (or "alias").
	Aliases []string
	// Tags are the frontmatter tags and the inline #tags outside code,
	// without "#", lower-cased (Obsidian tags are case-insensitive),
	// deduplicated, in first-seen order.
	Tags []string
	// Props is the parsed frontmatter; empty when there is none or it is
	// malformed.
	Props map[string]any
	// Links are the targets of wikilinks and of relative markdown links,
	// without "#heading" or "|shown text", deduplicated.
	Links []string
	// Sections split the body at headings. The first section holds the text
	// before the first heading (it may be empty and is then omitted).
	Sections []Section
	// BodyLine is the 1-based line where the body starts (after the
	// frontmatter).
	BodyLine int
	// Warnings say what was odd about the note (malformed frontmatter,
	// invalid UTF-8). The note is still parsed.
	Warnings []string
}

// Section is the text under one heading, up to the next heading.
type Section struct {
	// Heading is the heading's plain text; "" for the text before the first
	// heading.
	Heading string
	// Level is the heading level 1-6; 0 for the text before the first
	// heading.
	Level int
	// Path holds the headings above this one and this one, outermost first.
	Path []string
	// Line is the 1-based line of the heading (or of the first body line).
	Line int
	// EndLine is the last line of the section.
	EndLine int
	// Text is the section's plain text without markup, code included.
	Text string
}

var md = goldmark.New()

var (
	wikilinkRe = regexp.MustCompile(`!?\[\[([^\[\]\|#^]*)(?:[#^][^\[\]\|]*)?(?:\|([^\[\]]*))?\]\]`)
	// tagRe: letters, digits and marks of any script, emoji (symbols
	// other, skin-tone modifiers, the zero-width joiner; variation
	// selectors are marks), _ - and / (SPEC §9).
	tagRe     = regexp.MustCompile(`(?:^|[\s(\[,;:!?"'])#([\p{L}\p{N}\p{M}\p{So}\x{1F3FB}-\x{1F3FF}\x{200D}_/\-]+)`)
	commentRe = regexp.MustCompile(`(?s)%%.*?%%`)
	// mathRe is $$…$$ math, which is neither text nor tags.
	mathRe = regexp.MustCompile(`(?s)\$\$.*?\$\$`)
	// blockIDRe is an Obsidian block id: " ^id" ending a line, or a line
	// holding only "^id" (after a list or a table).
	blockIDRe = regexp.MustCompile(`(?m)(?:^|[ \t])\^[A-Za-z0-9-]+[ \t]*$`)
)

// bom is the UTF-8 byte order mark some editors write first.
const bom = "\ufeff"

// Parse parses a note. name is its vault-relative path (for the fallback
// title). Parse never fails and never panics on any input.
func Parse(name string, data []byte) *Note {
	n := &Note{Props: map[string]any{}, BodyLine: 1}
	if !utf8.Valid(data) {
		n.Warnings = append(n.Warnings, "invalid UTF-8 replaced")
		data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
	}
	// A BOM before the frontmatter would hide it (and the title and tags
	// in it): it is not content.
	data = bytes.TrimPrefix(data, []byte(bom))
	body := data
	if fm, b, ok := vault.SplitFrontmatter(data); ok {
		props := map[string]any{}
		if err := yaml.Unmarshal(fm, &props); err != nil {
			n.Warnings = append(n.Warnings, fmt.Sprintf("malformed frontmatter indexed as text: %v", firstLine(err.Error())))
		} else {
			if props != nil {
				n.Props = props
			}
			body = b
			n.BodyLine = 1 + bytes.Count(data[:len(data)-len(b)], []byte("\n"))
		}
	}
	n.Aliases = stringList(n.Props["aliases"])
	if len(n.Aliases) == 0 {
		n.Aliases = stringList(n.Props["alias"])
	}
	tags := newSet()
	for _, t := range stringList(n.Props["tags"]) {
		for _, f := range strings.FieldsFunc(t, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
			tags.add(normTag(f))
		}
	}
	for _, t := range stringList(n.Props["tag"]) {
		tags.add(normTag(t))
	}
	links := newSet()
	p := &parser{src: body, lineBase: n.BodyLine, tags: tags, links: links}
	p.lineStarts = lineStarts(body)
	p.run()
	n.Sections = p.sections
	n.Tags = tags.list
	n.Links = links.list
	if t, ok := n.Props["title"].(string); ok && strings.TrimSpace(t) != "" {
		n.Title = strings.TrimSpace(t)
	} else if p.firstH1 != "" {
		n.Title = p.firstH1
	} else {
		base := path.Base(strings.ReplaceAll(name, `\`, "/"))
		n.Title = strings.TrimSuffix(base, path.Ext(base))
	}
	return n
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// normTag strips "#" and lower-cases; it returns "" for something that is not
// a tag (empty, digits only, or holding a character tags cannot hold). It
// composes (NFC) before it lower-cases: lower-casing I and a combining dot
// gives i and the dot, which nothing composes back, while the composed İ
// lower-cases to i, as a query for the tag does.
func normTag(t string) string {
	t = strings.TrimPrefix(strings.TrimSpace(t), "#")
	t = strings.Trim(t, "/")
	if t == "" {
		return ""
	}
	digits := true
	for _, r := range t {
		if !isTagRune(r) {
			return ""
		}
		if !unicode.IsDigit(r) {
			digits = false
		}
	}
	if digits {
		return ""
	}
	// Composed again after: İ with a circumflex lower-cases to i and
	// the circumflex, which is î composed (FuzzParse).
	return norm.NFC.String(strings.ToLower(norm.NFC.String(t)))
}

// isTagRune reports whether r may be part of a tag: a letter, digit or
// mark of any script, an emoji (Obsidian accepts #📚), _ - or /.
func isTagRune(r rune) bool {
	switch {
	case unicode.IsLetter(r), unicode.IsDigit(r), unicode.IsMark(r), r == '_', r == '-', r == '/':
		return true
	case r < utf8.RuneSelf:
		return false // ASCII punctuation and symbols end a tag
	case unicode.Is(unicode.So, r), r >= 0x1F3FB && r <= 0x1F3FF, r == 0x200D:
		return true
	}
	return false
}

// stringList reads a property that may be a list or a single string.
func stringList(v any) []string {
	switch x := v.(type) {
	case string:
		if s := strings.TrimSpace(x); s != "" {
			return []string{s}
		}
	case []any:
		var out []string
		for _, e := range x {
			if e == nil {
				continue
			}
			if s := strings.TrimSpace(fmt.Sprint(e)); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

type set struct {
	seen map[string]bool
	list []string
}

func newSet() *set { return &set{seen: map[string]bool{}} }

func (s *set) add(v string) {
	if v == "" || s.seen[v] {
		return
	}
	s.seen[v] = true
	s.list = append(s.list, v)
}

func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, b := range src {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

type parser struct {
	src        []byte
	lineStarts []int
	lineBase   int
	tags       *set
	links      *set

	sections []Section
	cur      *Section
	buf      strings.Builder
	stack    []string // heading path
	levels   []int
	firstH1  string
}

// line turns a byte offset in the body into a 1-based note line.
func (p *parser) line(off int) int {
	i := sort.SearchInts(p.lineStarts, off+1) - 1
	if i < 0 {
		i = 0
	}
	return p.lineBase + i
}

func (p *parser) run() {
	doc := md.Parser().Parse(text.NewReader(p.src))
	p.cur = &Section{Line: p.lineBase}
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		p.block(c)
	}
	// The last line ends the text; a final newline starts no line.
	n := len(p.lineStarts)
	if n > 1 && p.lineStarts[n-1] == len(p.src) {
		n--
	}
	p.flush(p.lineBase + n - 1)
	// Comments may hold anything; they are not content.
}

func (p *parser) flush(end int) {
	s := p.cur
	s.Text = strings.TrimSpace(p.buf.String())
	s.EndLine = end
	if s.EndLine < s.Line {
		s.EndLine = s.Line
	}
	if s.Level > 0 || s.Text != "" {
		p.sections = append(p.sections, *s)
	}
	p.buf.Reset()
}

func (p *parser) block(n ast.Node) {
	switch b := n.(type) {
	case *ast.Heading:
		prose, _ := p.inlines(b)
		title := strings.TrimSpace(prose)
		if strings.ContainsAny(title, "\r\n") {
			// A setext heading may span lines (text over ---, as a
			// frontmatter that failed to close leaves it); it reads as
			// one line, as Obsidian shows it.
			title = strings.Join(strings.Fields(title), " ")
		}
		start := p.lineBase
		if b.Lines().Len() > 0 {
			start = p.line(b.Lines().At(0).Start)
		} else if b.Lines().Len() == 0 {
			// An empty heading: find it through the previous section's end.
			start = p.cur.Line
		}
		p.flush(start - 1)
		for len(p.levels) > 0 && p.levels[len(p.levels)-1] >= b.Level {
			p.levels = p.levels[:len(p.levels)-1]
			p.stack = p.stack[:len(p.stack)-1]
		}
		p.levels = append(p.levels, b.Level)
		p.stack = append(p.stack, title)
		p.cur = &Section{Heading: title, Level: b.Level, Line: start, Path: append([]string(nil), p.stack...)}
		if b.Level == 1 && p.firstH1 == "" {
			p.firstH1 = title
		}
		return
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			p.buf.Write(seg.Value(p.src))
		}
		p.buf.WriteByte('\n')
		return
	case *ast.HTMLBlock:
		// Obsidian shows the text of an HTML block (<div>, <details>):
		// it is text, without its tags, comments, scripts and styles.
		var raw bytes.Buffer
		lines := b.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			raw.Write(seg.Value(p.src))
		}
		if b.HasClosure() {
			raw.Write(b.ClosureLine.Value(p.src))
		}
		if t := HTMLText(raw.String()); strings.TrimSpace(t) != "" {
			p.buf.WriteString(t)
			p.buf.WriteByte('\n')
		}
		return
	case *ast.ThematicBreak:
		return
	}
	if n.Type() == ast.TypeBlock && n.FirstChild() != nil && n.FirstChild().Type() == ast.TypeInline {
		prose, code := p.inlines(n)
		p.buf.WriteString(prose)
		if code != "" {
			p.buf.WriteByte(' ')
			p.buf.WriteString(code)
		}
		p.buf.WriteByte('\n')
		return
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		p.block(c)
	}
}

// inlines returns the plain text of a leaf block (wikilinks shown as their
// text, comments dropped) and the text of its code spans, and records the
// block's tags and links.
func (p *parser) inlines(n ast.Node) (prose, code string) {
	var raw, codeBuf strings.Builder
	var walk func(ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch x := c.(type) {
			case *ast.Text:
				raw.Write(x.Value(p.src))
				if x.SoftLineBreak() || x.HardLineBreak() {
					raw.WriteByte('\n')
				}
			case *ast.String:
				raw.Write(x.Value)
			case *ast.CodeSpan:
				raw.WriteByte(' ')
				for t := x.FirstChild(); t != nil; t = t.NextSibling() {
					if tt, ok := t.(*ast.Text); ok {
						codeBuf.Write(tt.Value(p.src))
					}
				}
				codeBuf.WriteByte(' ')
			case *ast.Link:
				walk(x)
				p.mdLink(string(x.Destination))
			case *ast.Image:
				walk(x)
			case *ast.AutoLink:
				raw.Write(x.URL(p.src))
			case *ast.RawHTML:
				// skipped: markup, not content
			default:
				walk(c)
			}
		}
	}
	walk(n)
	s := raw.String()
	// The regexps are the costly part of parsing; most blocks need none.
	if strings.Contains(s, "%%") {
		s = commentRe.ReplaceAllString(s, " ")
	}
	if strings.Contains(s, "$$") {
		s = mathRe.ReplaceAllString(s, " ")
	}
	if strings.IndexByte(s, '^') >= 0 {
		s = blockIDRe.ReplaceAllString(s, "")
	}
	if strings.IndexByte(s, '#') >= 0 {
		tagged := s
		if strings.IndexByte(s, '$') >= 0 {
			// $x #tag$ is inline math, not a tag; the text stays
			// (a $ is as often a price).
			tagged = inlineMathRe.ReplaceAllString(s, " $1")
		}
		for _, m := range tagRe.FindAllStringSubmatch(tagged, -1) {
			p.tags.add(normTag(m[1]))
		}
	}
	if !strings.Contains(s, "[[") {
		return s, strings.TrimSpace(codeBuf.String())
	}
	s = wikilinkRe.ReplaceAllStringFunc(s, func(m string) string {
		sub := wikilinkRe.FindStringSubmatch(m)
		target := strings.TrimSpace(sub[1])
		if target != "" {
			p.links.add(target)
		}
		if sub[2] != "" && !(m[0] == '!' && isSize(sub[2])) {
			return sub[2]
		}
		return target
	})
	return s, strings.TrimSpace(codeBuf.String())
}

// mdLink records a relative markdown link to a note ("Other%20note.md").
func (p *parser) mdLink(dest string) {
	if dest == "" || strings.Contains(dest, "://") || strings.HasPrefix(dest, "mailto:") || strings.HasPrefix(dest, "#") {
		return
	}
	d, _, _ := strings.Cut(dest, "#")
	if u, err := url.PathUnescape(d); err == nil {
		d = u
	}
	d = strings.TrimSuffix(d, ".md")
	if d != "" {
		p.links.add(d)
	}
}

// mdLinkRe is a markdown link or image: [text](dest).
var mdLinkRe = regexp.MustCompile(`!?\[([^\[\]]*)\]\([^()\s]*(?:\s+"[^"]*")?\)`)

// Display returns text as Obsidian shows it in reading view, for
// snippets: a wikilink or embed as its shown text, else its target
// ("Note > Heading" for [[Note#Heading]], the note for a block link); a
// markdown link as its text; %%comments%%, $$math$$ and ^block-id markers
// left out. Everything else is kept as it is.
func Display(text string) string {
	if strings.Contains(text, "%%") {
		text = commentRe.ReplaceAllString(text, " ")
	}
	if strings.Contains(text, "$$") {
		text = mathRe.ReplaceAllString(text, " ")
	}
	if strings.IndexByte(text, '^') >= 0 {
		text = blockIDRe.ReplaceAllString(text, "")
	}
	if strings.Contains(text, "[[") {
		text = wikilinkRe.ReplaceAllStringFunc(text, func(m string) string {
			return wikiDisplay(m, false)
		})
	}
	if strings.Contains(text, "](") {
		text = mdLinkRe.ReplaceAllString(text, "$1")
	}
	return text
}

// DisplayProperty is [Display] for a property value: a wikilink with
// shown text also names its target, "Ada (Ada Lovelace)", since a
// property is often matched by the name it links to.
func DisplayProperty(text string) string {
	if strings.Contains(text, "[[") {
		text = wikilinkRe.ReplaceAllStringFunc(text, func(m string) string {
			shown, target := wikiParts(m)
			if shown == "" || shown == target {
				return target
			}
			return shown + " (" + target + ")"
		})
	}
	return Display(text)
}

// wikiParts takes a wikilink or embed apart: the text it was given to
// show ("" if none) and its target as Obsidian shows it ("Note > Heading"
// for [[Note#Heading]], the note alone for a block link).
func wikiParts(m string) (shown, target string) {
	inner := strings.TrimPrefix(strings.TrimPrefix(m, "!"), "[[")
	inner = strings.TrimSuffix(inner, "]]")
	t, sh, _ := strings.Cut(inner, "|")
	note, sub, _ := strings.Cut(strings.TrimSpace(t), "#")
	target = note
	if sub != "" && !strings.HasPrefix(sub, "^") {
		if note == "" {
			target = sub
		} else {
			target = note + " > " + sub
		}
	}
	if strings.HasPrefix(m, "!") && isSize(sh) {
		sh = "" // ![[picture.png|100]]: a width, not text
	}
	return strings.TrimSpace(sh), target
}

// sizeRe is an embed's size after |: a width, or width x height.
var sizeRe = regexp.MustCompile(`^\s*\d+(?:\s*x\s*\d+)?\s*$`)

func isSize(s string) bool { return sizeRe.MatchString(s) }

var (
	// inlineMathRe is $…$ math: no space inside either $, the closing
	// one not followed by a digit ($5 and $6 is not math).
	inlineMathRe = regexp.MustCompile(`\$[^\s$](?:[^$\n]*[^\s$])?\$([^0-9]|$)`)
	htmlDropRe   = regexp.MustCompile(`(?is)<!--.*?-->|<script\b.*?</script\s*>|<style\b.*?</style\s*>`)
	// HTMLTagRe is an HTML tag (not an autolink: <https://…>).
	HTMLTagRe = regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>`)
)

// HTMLText is the text an HTML block shows: without comments, scripts,
// styles and tags (each tag a space), entities decoded.
func HTMLText(s string) string {
	s = htmlDropRe.ReplaceAllString(s, " ")
	s = HTMLTagRe.ReplaceAllString(s, " ")
	return html.UnescapeString(s)
}

// wikiDisplay is what a wikilink shows; with both, its target as well
// (for search: [[Ada Lovelace|Ada]] is found by "Lovelace").
func wikiDisplay(m string, both bool) string {
	shown, target := wikiParts(m)
	switch {
	case shown == "":
		return target
	case both:
		return shown + " " + target
	}
	return shown
}

// PropertyText is a frontmatter value as text to search: strings as they
// are with each wikilink as its shown text and its target ("[[Ada
// Lovelace|Ada]]" gives "Ada Ada Lovelace"), lists joined by newlines,
// numbers, booleans and dates as written, nested maps by their values.
func PropertyText(v any) string {
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case nil:
		case string:
			s := x
			if strings.Contains(s, "[[") {
				s = wikilinkRe.ReplaceAllStringFunc(s, func(m string) string { return wikiDisplay(m, true) })
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(strings.TrimSpace(s))
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
		case time.Time:
			if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
				walk(x.Format("2006-01-02"))
			} else {
				walk(x.Format(time.RFC3339))
			}
		default:
			walk(fmt.Sprint(x))
		}
	}
	walk(v)
	return b.String()
}
