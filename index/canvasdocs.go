package index

import (
	"bytes"
	"path"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/index/canvas"
	"github.com/nexus-memory/nexus/index/markdown"
)

// A .canvas file (Obsidian's JSON Canvas) is one document: its text
// nodes' text (markdown, read as a note's body: tags count) and its
// groups' labels (as headings) are searchable, its title is its file
// name, and a hit points at the canvas (SPEC §5 "Links"). Its snippet is
// cut from [canvas.Text], line for line with the file.

// isCanvas reports whether a vault path is a canvas.
func isCanvas(rel string) bool { return strings.EqualFold(path.Ext(rel), ".canvas") }

// canvasDocs turns a canvas into its search document.
func canvasDocs(rel, disk string, data []byte, date time.Time) []doc {
	var texts, labels, tags []string
	seen := map[string]bool{}
	for _, n := range canvas.Parse(data) {
		switch n.Type {
		case "text":
			nt := markdown.Parse(rel, []byte(n.Text))
			for _, s := range nt.Sections {
				if s.Heading != "" {
					labels = append(labels, s.Heading)
				}
				if s.Text != "" {
					texts = append(texts, s.Text)
				}
			}
			for _, t := range nt.Tags {
				if !seen[t] {
					seen[t] = true
					tags = append(tags, t)
				}
			}
		case "group":
			if l := strings.TrimSpace(n.Label); l != "" {
				labels = append(labels, l)
			}
		case "file":
			texts = append(texts, fileTitle(n.File))
		}
	}
	tags = foldKeys(tags)
	d := doc{
		Path:     rel,
		Line:     1,
		End:      bytes.Count(data, []byte("\n")) + 1,
		Title:    fileTitle(rel),
		Tags:     tags,
		TagText:  strings.Join(tags, " "),
		Headings: strings.Join(labels, "\n"),
		Body:     strings.Join(texts, "\n"),
		Kind:     KindNote,
		Type:     "canvas",
		Date:     date.UTC(),
	}
	if len(data) > 0 && data[len(data)-1] == '\n' && d.End > 1 {
		d.End--
	}
	if disk != rel {
		d.Disk = disk
	}
	d.Names = names(d.Title, d.Aliases)
	d.All = strings.Join([]string{d.Title, d.TagText, d.Headings, d.Body}, "\n")
	if len(d.Body) > maxPairedBody {
		d.Body, d.LongBody = "", d.Body
	}
	return []doc{d}
}
