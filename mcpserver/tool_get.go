package mcpserver

import (
	"context"
	"strings"
)

// maxGetLines bounds one memory_get read when no line count is given.
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
				{"path", strProp("Vault-relative path of the note, e.g. projects/atlas.md.")},
				{"from", intProp("First line to return, counting from 1 (default 1).")},
				{"lines", intProp("How many lines to return (default: to the end, at most 2000).")},
			}, "path"),
			hints{title: "Read a vault note", readOnly: true, idempotent: true}),
		run: s.memoryGet,
	}
}

func (s *Server) memoryGet(ctx context.Context, c *call) (any, error) {
	p := c.str("path", true)
	from := c.integer("from", 1, 1, 1<<30)
	n := c.integer("lines", 0, 0, 1<<30)
	if c.err != nil {
		return nil, c.err
	}
	clean, data, err := s.readNote(p)
	if err != nil {
		return nil, err
	}
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
	res.Text = strings.Join(all[from-1:end], "")
	res.Lines = end - (from - 1)
	if n == 0 && end < len(all) {
		res.NextFrom = end + 1
	}
	return res, nil
}
