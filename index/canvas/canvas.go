// Package canvas reads Obsidian's .canvas files (JSON Canvas 1.0): the
// text a person sees on a canvas (text nodes and group labels) and the
// files it shows (file nodes), each with the line of its node in the
// file. It never fails on bad input: what cannot be read is left out.
package canvas

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Node is one node of a canvas.
type Node struct {
	ID   string `json:"id"`
	Type string `json:"type"` // text, file, link or group
	// Text is a text node's markdown.
	Text string `json:"text"`
	// File is a file node's vault path ("Notes/Ada.md", "pic.png").
	File string `json:"file"`
	// Subpath is a file node's "#heading" or "#^block", if any.
	Subpath string `json:"subpath"`
	// URL is a link node's address.
	URL string `json:"url"`
	// Label is a group's label.
	Label string `json:"label"`
	// Line is the 1-based line of the file where the node starts.
	Line int `json:"-"`
}

// Parse returns the nodes of a canvas in file order, each with its line.
// Input that is not a canvas gives no nodes; a node that does not decode
// is skipped.
func Parse(data []byte) []Node {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var nodes []Node
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nodes
		}
		if k != "nodes" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nodes
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nodes
		}
		for dec.More() {
			off := dec.InputOffset()
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				return nodes
			}
			var n Node
			if json.Unmarshal(raw, &n) != nil {
				continue
			}
			// The node starts at the first '{' after the previous token.
			start := int(off)
			if i := bytes.IndexByte(data[start:], '{'); i >= 0 {
				start += i
			}
			n.Line = 1 + bytes.Count(data[:start], []byte("\n"))
			nodes = append(nodes, n)
		}
		if _, err := dec.Token(); err != nil {
			return nodes
		}
	}
	return nodes
}

// Text is the canvas as a reader sees it, line for line with data: the
// line where a text node starts holds its text (its lines joined by
// spaces), a group's line its label, a file node's line the file's name;
// every other line is empty. Snippets are cut from it, so that a hit's
// line numbers are the file's.
func Text(data []byte) []byte {
	lines := bytes.Count(data, []byte("\n")) + 1
	out := make([][]byte, lines)
	for _, n := range Parse(data) {
		var s string
		switch n.Type {
		case "text":
			s = n.Text
		case "group":
			s = n.Label
		case "file":
			s = n.File
		}
		if s == "" || n.Line > lines {
			continue
		}
		s = strings.Join(strings.Fields(s), " ")
		if len(out[n.Line-1]) > 0 {
			out[n.Line-1] = append(out[n.Line-1], ' ')
		}
		out[n.Line-1] = append(out[n.Line-1], s...)
	}
	return bytes.Join(out, []byte("\n"))
}
