package vault

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SplitFrontmatter splits a note into its YAML frontmatter and body, the way
// Obsidian does: frontmatter exists only when the very first line is "---"
// and a later line is "---". fm is the YAML between the fences (without
// them); body is everything after the closing fence's line. When there is
// no frontmatter, ok is false and body is data.
func SplitFrontmatter(data []byte) (fm, body []byte, ok bool) {
	first, rest, found := bytes.Cut(data, []byte("\n"))
	if !found || string(bytes.TrimRight(first, "\r")) != "---" {
		return nil, data, false
	}
	off := 0
	for off <= len(rest) {
		line, _, more := bytes.Cut(rest[off:], []byte("\n"))
		if string(bytes.TrimRight(line, "\r \t")) == "---" {
			end := off + len(line)
			if more {
				end++
			}
			return rest[:off], rest[end:], true
		}
		if !more {
			break
		}
		off += len(line) + 1
	}
	return nil, data, false
}

// ParseFrontmatter parses a note's frontmatter into a map. A note without
// frontmatter yields an empty map; malformed YAML is an error (the body is
// still returned).
func ParseFrontmatter(data []byte) (map[string]any, []byte, error) {
	fm, body, ok := SplitFrontmatter(data)
	props := map[string]any{}
	if !ok {
		return props, body, nil
	}
	if err := yaml.Unmarshal(fm, &props); err != nil {
		return map[string]any{}, body, fmt.Errorf("frontmatter: %w", err)
	}
	if props == nil {
		props = map[string]any{}
	}
	return props, body, nil
}

// SetProperty sets one frontmatter key to a scalar value and returns the new
// note. Only that key's lines change: every other byte of the note (other
// keys, comments, the body, line endings) is kept. A note without
// frontmatter gets a new block holding just that key.
func SetProperty(data []byte, key, value string) ([]byte, error) {
	line, err := yamlLine(key, value)
	if err != nil {
		return nil, err
	}
	fm, body, ok := SplitFrontmatter(data)
	if !ok {
		return []byte("---\n" + line + "\n---\n" + string(data)), nil
	}
	nl := "\n"
	if bytes.Contains(data[:bytes.IndexByte(data, '\n')+1], []byte("\r\n")) {
		nl = "\r\n"
	}
	lines := strings.SplitAfter(string(fm), "\n")
	var out strings.Builder
	out.WriteString("---" + nl)
	replaced := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !replaced && topKey(l) == key {
			out.WriteString(line + nl)
			replaced = true
			// Skip the old value's continuation lines (indented or list items).
			for i+1 < len(lines) && isContinuation(lines[i+1]) {
				i++
			}
			continue
		}
		out.WriteString(l)
	}
	if !replaced {
		out.WriteString(line + nl)
	}
	out.WriteString("---" + nl)
	out.Write(body)
	return []byte(out.String()), nil
}

// topKey returns the key of a top-level "key: value" line, or "".
func topKey(line string) string {
	if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' || line[0] == '-' {
		return ""
	}
	k, _, ok := strings.Cut(line, ":")
	if !ok {
		return ""
	}
	return strings.Trim(strings.TrimSpace(k), `"'`)
}

func isContinuation(line string) bool {
	t := strings.TrimRight(line, "\r\n")
	return t != "" && (t[0] == ' ' || t[0] == '\t' || strings.HasPrefix(t, "- "))
}

// yamlLine renders "key: value" with value quoted only when YAML needs it.
func yamlLine(key, value string) (string, error) {
	// Checked on the value itself: YAML renders "\n" as a block scalar
	// whose only content is the trailing newline trimmed below.
	if strings.ContainsAny(value, "\r\n") {
		return "", fmt.Errorf("property %s: value must be one line: %w", key, ErrInvalid)
	}
	out, err := yaml.Marshal(map[string]string{key: value})
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", key, err)
	}
	s := strings.TrimRight(string(out), "\n")
	if strings.Contains(s, "\n") {
		return "", fmt.Errorf("property %s: value must be one line: %w", key, ErrInvalid)
	}
	return s, nil
}
