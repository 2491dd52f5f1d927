package mcpserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/vault"
)

// maxGetLines bounds one memory_get read.
const maxGetLines = 2000

// getResult is memory_get's result.
type getResult struct {
	Path       string `json:"path"`
	From       int    `json:"from"`
	Lines      int    `json:"lines"`
	TotalLines int    `json:"total_lines"`
	Text       string `json:"text"`
	// NextFrom is the line to continue from when the read stopped early.
	NextFrom int `json:"next_from,omitempty"`
}

func (s *Server) memoryGetTool() tool {
	return tool{
		def: newTool("memory_get", `Read a markdown note of the shared vault, whole or a range of lines.

Use it after memory_search (pass the hit's path, and its line as from) or to read a known note such as projects/NAME.md, agents/NAME/memory/SLUG.md or log/decisions.md.
Only .md files inside the vault can be read; .nexus/ (keys, state) and other dot-folders, absolute paths and ".." are refused.
Returns {path, from, lines, total_lines, text, next_from?}. When next_from is set, call again with from=next_from to read on.`,
			objectSchema(fields{
				{"path", strLen("Vault-relative path of the note, e.g. projects/atlas.md.", 1, 4096)},
				{"from", intRange("First line to return, counting from 1 (default 1).", 1, 1<<30)},
				{"lines", intRange("How many lines to return, 1-2000 (default: up to 2000, with next_from when the note goes on).", 1, maxGetLines)},
			}, "path"),
			hints{title: "Read a vault note", readOnly: true, idempotent: true}),
		run: s.memoryGet,
	}
}

func (s *Server) memoryGet(ctx context.Context, c *call) (any, error) {
	p := c.str("path", true)
	from := c.integer("from", 1, 1, 1<<30)
	n := c.integer("lines", 0, 1, maxGetLines) // absent: up to maxGetLines, with next_from
	if c.err != nil {
		return nil, c.err
	}
	clean, f, size, err := s.openNote(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > maxNoteBytes {
		// A note too large to load whole (a search hit can point into
		// one) is streamed: only the asked lines are kept.
		res, err := readLines(f, clean, from, n)
		// Judged on the lines read: a paragraph reaching back before
		// from is judged by its part in range.
		res.Text = shownNote(clean, string(s.lg.Shown(clean, []byte(res.Text), from)))
		if err == nil && res.Lines > 0 {
			agents.RecordRead(s.vault(), c.agent, clean, "mcp", nil, from, from+res.Lines-1) // a recall signal (a large feed file's log entries)
		}
		return res, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxNoteBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", clean, err)
	}
	data = s.lg.Shown(clean, data, 1) // a quarantined log entry shows its notice
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	all := strings.SplitAfter(text, "\n")
	if len(all) > 0 && all[len(all)-1] == "" {
		all = all[:len(all)-1]
	}
	res := getResult{Path: clean, From: from, TotalLines: len(all)}
	if from > len(all) {
		return res, nil
	}
	limit := n
	if limit == 0 {
		limit = maxGetLines
	}
	end := min(len(all), from-1+limit)
	res.Text = shownLines(clean, all, from-1, end) // scanned as returned (withhold.go)
	res.Lines = end - (from - 1)
	agents.RecordRead(s.vault(), c.agent, clean, "mcp", data, from, end) // a recall signal (docs/curation.md)
	if n == 0 && end < len(all) {
		res.NextFrom = end + 1
	}
	return res, nil
}

// readLines streams r and returns lines from..from+n-1 (n == 0: up to
// maxGetLines), keeping at most maxNoteBytes of text, and counts every line
// for total_lines.
func readLines(r io.Reader, clean string, from, n int) (getResult, error) {
	res := getResult{Path: clean, From: from}
	limit := n
	if limit == 0 {
		limit = maxGetLines
	}
	var text strings.Builder
	br := bufio.NewReaderSize(r, 64<<10)
	full := false // the text reached maxNoteBytes
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return res, fmt.Errorf("read %q: %w", clean, err)
		}
		if len(b) == 0 {
			break
		}
		res.TotalLines = line
		if line >= from && res.Lines < limit && !full {
			if text.Len()+len(b) > maxNoteBytes {
				if res.Lines == 0 {
					return res, fmt.Errorf("line %d of %q is longer than the %d bytes one read returns: %w", line, clean, maxNoteBytes, vault.ErrRefused)
				}
				full, res.NextFrom = true, line
			} else {
				text.Write(b)
				res.Lines++
			}
		}
		if err == io.EOF {
			break
		}
	}
	if n == 0 && !full && res.Lines == limit && from-1+res.Lines < res.TotalLines {
		res.NextFrom = from + res.Lines
	}
	res.Text = strings.ReplaceAll(text.String(), "\r\n", "\n")
	return res, nil
}
