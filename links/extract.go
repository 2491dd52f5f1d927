// Package links finds a note's outgoing links and its backlinks, with the
// line of each, resolved as Obsidian resolves them (SPEC §5 "Links", §9):
// [[T]], [[T|shown]], [[T#Heading]], [[T#^block]], embeds ![[T]],
// markdown links [x](T%20name.md), links in frontmatter properties, and
// the file nodes of a .canvas. A target is matched by vault path, else by
// file name anywhere in the vault (case-insensitively, after NFC
// normalisation, ".md" optional); of several files of that name the one in
// the linking note's folder wins, else the shortest path.
//
// Backlinks need the whole vault: [Find] scans it (every note and canvas
// outside dot-folders), reading files in parallel.
package links

import (
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/nexus-memory/nexus/index/canvas"
)

// Link is one link as written in a file.
type Link struct {
	// From is the vault path of the file holding the link.
	From string `json:"from"`
	// Line is the 1-based line of the link in From.
	Line int `json:"line"`
	// Target is the linked path as written, without "#sub" or "|shown"
	// ("Ada Lovelace", "img/pic.png").
	Target string `json:"target"`
	// Sub is the heading or block linked to: "Heading", "^block", or "".
	Sub string `json:"sub,omitempty"`
	// Shown is the text shown for the link ("" when it shows its target).
	Shown string `json:"shown,omitempty"`
	// Embed is true for ![[T]] and ![x](T), and a canvas's file nodes.
	Embed bool `json:"embed,omitempty"`
	// Markdown is true for a markdown link [x](T.md).
	Markdown bool `json:"markdown,omitempty"`
	// Property is the frontmatter property the link is in, if any.
	Property string `json:"property,omitempty"`
	// Text is the line holding the link, trimmed (at most 200
	// characters), as context.
	Text string `json:"text"`
	// Path is the vault path the link resolves to; "" when no file of
	// that name exists (an unresolved link, as Obsidian shows it).
	Path string `json:"path"`
}

var (
	wikiRe = regexp.MustCompile(`(!?)\[\[([^\[\]]+?)\]\]`)
	// mdRe is [text](dest) or ![text](dest), dest plain or in <…>, an
	// optional "title" after it.
	mdRe      = regexp.MustCompile(`(!?)\[([^\[\]]*)\]\((<[^<>\n]*>|[^()\s]+)(?:\s+"[^"]*")?\)`)
	schemeRe  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	codeRe    = regexp.MustCompile("(`+)[^`].*?(`+)")
	propKeyRe = regexp.MustCompile(`^([^\s:#-][^:]*):`)
)

// Extract returns the links of a file, in the order they are written. A
// .canvas file (by name) gives its file nodes and the links in its text
// nodes; anything else is read as markdown: links inside code and
// %%comments%% are not links.
func Extract(name string, data []byte) []Link {
	if strings.EqualFold(extOf(name), ".canvas") {
		return extractCanvas(name, data)
	}
	return extractMarkdown(name, string(data), 1)
}

func extractCanvas(name string, data []byte) []Link {
	var out []Link
	for _, n := range canvas.Parse(data) {
		switch n.Type {
		case "file":
			if n.File == "" {
				continue
			}
			out = append(out, Link{From: name, Line: n.Line, Target: n.File, Sub: strings.TrimPrefix(n.Subpath, "#"), Embed: true, Text: n.File})
		case "text":
			for _, l := range extractMarkdown(name, n.Text, 1) {
				l.Line = n.Line
				out = append(out, l)
			}
		}
	}
	return out
}

// extractMarkdown reads text as a note whose first line is line first.
func extractMarkdown(name, text string, first int) []Link {
	lines := strings.Split(strings.TrimPrefix(text, "\ufeff"), "\n")
	var out []Link
	i := 0
	// Frontmatter: --- first, a closing --- (or ...) later.
	if len(lines) > 1 && strings.TrimRight(lines[0], " \t\r") == "---" {
		end := -1
		for j := 1; j < len(lines); j++ {
			if l := strings.TrimRight(lines[j], " \t\r"); l == "---" || l == "..." {
				end = j
				break
			}
		}
		if end > 0 {
			key := ""
			for j := 1; j < end; j++ {
				if m := propKeyRe.FindStringSubmatch(lines[j]); m != nil {
					key = strings.TrimSpace(m[1])
				}
				for _, l := range wikiLinks(lines[j]) {
					l.From, l.Line, l.Property, l.Text = name, first+j, key, lineText(lines[j])
					out = append(out, l)
				}
			}
			i = end + 1
		}
	}
	fence := ""
	comment := false
	for ; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r")
		trimmed := strings.TrimLeft(line, " \t")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" \t") == "" {
				fence = ""
			}
			continue
		}
		if !comment && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) && len(line)-len(trimmed) < 4 {
			c := trimmed[:1]
			n := len(trimmed) - len(strings.TrimLeft(trimmed, c))
			fence = strings.Repeat(c, n)
			continue
		}
		// %%comments%% may span lines; what is outside them counts.
		var vis strings.Builder
		rest := line
		for {
			k := strings.Index(rest, "%%")
			if k < 0 {
				if !comment {
					vis.WriteString(rest)
				}
				break
			}
			if !comment {
				vis.WriteString(rest[:k])
			}
			vis.WriteString("  ")
			comment = !comment
			rest = rest[k+2:]
		}
		s := vis.String()
		if strings.IndexByte(s, '`') >= 0 {
			s = codeRe.ReplaceAllStringFunc(s, func(m string) string { return strings.Repeat(" ", len(m)) })
		}
		found := wikiLinks(s)
		if strings.Contains(s, "](") {
			found = append(found, mdLinks(s)...)
		}
		for _, l := range found {
			l.From, l.Line, l.Text = name, first+i, lineText(line)
			out = append(out, l)
		}
	}
	return out
}

// wikiLinks are the [[…]] links of a line, in order.
func wikiLinks(s string) []Link {
	if !strings.Contains(s, "[[") {
		return nil
	}
	var out []Link
	for _, m := range wikiRe.FindAllStringSubmatch(s, -1) {
		inner := m[2]
		t, shown, _ := strings.Cut(inner, "|")
		// In a table the pipe is escaped: [[T\|shown]].
		t = strings.TrimSuffix(t, `\`)
		t, sub, _ := strings.Cut(t, "#")
		t = strings.TrimSpace(t)
		if t == "" {
			continue // [[#Heading]]: a link within the note itself
		}
		out = append(out, Link{Target: t, Sub: strings.TrimSpace(sub), Shown: strings.TrimSpace(shown), Embed: m[1] == "!"})
	}
	return out
}

// mdLinks are the markdown links of a line to vault files (not URLs).
func mdLinks(s string) []Link {
	var out []Link
	for _, m := range mdRe.FindAllStringSubmatch(s, -1) {
		dest := strings.TrimSuffix(strings.TrimPrefix(m[3], "<"), ">")
		if dest == "" || strings.HasPrefix(dest, "#") || schemeRe.MatchString(dest) {
			continue
		}
		d, sub, _ := strings.Cut(dest, "#")
		if u, err := url.PathUnescape(d); err == nil {
			d = u
		}
		if u, err := url.PathUnescape(sub); err == nil {
			sub = u
		}
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		out = append(out, Link{Target: d, Sub: sub, Shown: m[2], Embed: m[1] == "!", Markdown: true})
	}
	return out
}

// lineText is a line as context: trimmed, at most 200 characters.
func lineText(s string) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > 200 {
		r := []rune(s)
		s = string(r[:200]) + "…"
	}
	return s
}

func extOf(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 || strings.LastIndexByte(name, '/') > i {
		return ""
	}
	return name[i:]
}
