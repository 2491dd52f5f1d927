package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"
)

// A recall data set (docs/recall.md): a vault's notes or a conversation's
// turns, and questions naming the notes or turns that answer them.
type dataset struct {
	Name        string     `json:"name"`
	Description string     `json:"description,omitempty"`
	License     string     `json:"license,omitempty"`
	Notes       []note     `json:"notes,omitempty"`
	Turns       []turn     `json:"turns,omitempty"`
	Questions   []question `json:"questions"`
}

// note is one markdown file of the vault, at a vault-relative path.
type note struct {
	Path string `json:"path"`
	Text string `json:"text"`
}

// turn is one turn of a conversation; the bench writes it as the note
// turns/ID.md.
type turn struct {
	ID      string    `json:"id"`
	Speaker string    `json:"speaker"`
	Time    time.Time `json:"time,omitzero"`
	Text    string    `json:"text"`
}

// question is one recall question: Evidence lists the paths (of notes) or
// ids (of turns) that answer it; Also holds alternative phrasings of the
// same question, as the caller's own model would write them.
type question struct {
	ID       string   `json:"id"`
	Text     string   `json:"text"`
	Lang     string   `json:"lang"`
	Kind     string   `json:"kind"`
	Evidence []string `json:"evidence"`
	Also     []string `json:"also,omitempty"`
}

// Question kinds.
const (
	kindExact      = "exact"          // the question uses the evidence's own words
	kindParaphrase = "paraphrase"     // the same language, other words
	kindOtherLang  = "other-language" // asked in the vault's other language
)

// Limits of a data set, so that a hostile file cannot make the bench
// write a huge vault.
const (
	maxDataBytes  = 64 << 20
	maxItems      = 100000
	maxPathLen    = 200
	maxEvidence   = 100
	maxAlso       = 16
	maxTextLength = 1 << 20
)

var (
	langRe = regexp.MustCompile(`^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$`)
	idRe   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)
)

// turnPath is where a turn is written in the vault.
func turnPath(id string) string { return "turns/" + id + ".md" }

// loadDataset parses and checks a data set: unknown fields, a missing
// piece, a path that would leave the vault, an evidence id that names
// nothing, or a duplicate are errors.
func loadDataset(data []byte) (*dataset, error) {
	if len(data) > maxDataBytes {
		return nil, fmt.Errorf("load data set: %d bytes, more than %d", len(data), maxDataBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d dataset
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("load data set: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("load data set: data after the JSON object")
	}
	if err := d.validate(); err != nil {
		return nil, fmt.Errorf("load data set: %w", err)
	}
	return &d, nil
}

func (d *dataset) validate() error {
	if strings.TrimSpace(d.Name) == "" {
		return fmt.Errorf("name is empty")
	}
	if (len(d.Notes) == 0) == (len(d.Turns) == 0) {
		return fmt.Errorf("give notes or turns (exactly one of them)")
	}
	if len(d.Notes) > maxItems || len(d.Turns) > maxItems || len(d.Questions) > maxItems {
		return fmt.Errorf("more than %d notes, turns or questions", maxItems)
	}
	targets := map[string]bool{}
	folded := map[string]string{}
	for i, n := range d.Notes {
		if err := checkNotePath(n.Path); err != nil {
			return fmt.Errorf("notes[%d]: %w", i, err)
		}
		if len(n.Text) > maxTextLength {
			return fmt.Errorf("notes[%d] %s: text longer than %d bytes", i, n.Path, maxTextLength)
		}
		// Paths differing only in case are one file on macOS and Windows.
		if prev, ok := folded[strings.ToLower(n.Path)]; ok {
			return fmt.Errorf("notes[%d]: path %q repeats %q", i, n.Path, prev)
		}
		folded[strings.ToLower(n.Path)] = n.Path
		targets[n.Path] = true
	}
	for i, t := range d.Turns {
		if !idRe.MatchString(t.ID) {
			return fmt.Errorf("turns[%d]: id %q: use letters, digits, '.', '_' and '-' (at most 100)", i, t.ID)
		}
		if prev, ok := folded[strings.ToLower(t.ID)]; ok {
			return fmt.Errorf("turns[%d]: id %q repeats %q", i, t.ID, prev)
		}
		folded[strings.ToLower(t.ID)] = t.ID
		if strings.TrimSpace(t.Text) == "" {
			return fmt.Errorf("turns[%d] %s: text is empty", i, t.ID)
		}
		if len(t.Text) > maxTextLength {
			return fmt.Errorf("turns[%d] %s: text longer than %d bytes", i, t.ID, maxTextLength)
		}
		if strings.ContainsAny(t.Speaker, "\n\r") {
			return fmt.Errorf("turns[%d] %s: speaker holds a line break", i, t.ID)
		}
		targets[t.ID] = true
	}
	if len(d.Questions) == 0 {
		return fmt.Errorf("no questions")
	}
	qids := map[string]bool{}
	for i, q := range d.Questions {
		where := fmt.Sprintf("questions[%d] %s", i, q.ID)
		if q.ID == "" || qids[q.ID] {
			return fmt.Errorf("questions[%d]: id %q is empty or repeated", i, q.ID)
		}
		qids[q.ID] = true
		if strings.TrimSpace(q.Text) == "" {
			return fmt.Errorf("%s: text is empty", where)
		}
		if !langRe.MatchString(q.Lang) {
			return fmt.Errorf("%s: lang %q is not a language code (en, ko, pt-BR)", where, q.Lang)
		}
		switch q.Kind {
		case kindExact, kindParaphrase, kindOtherLang:
		default:
			return fmt.Errorf("%s: kind %q: use %s, %s or %s", where, q.Kind, kindExact, kindParaphrase, kindOtherLang)
		}
		if len(q.Evidence) == 0 || len(q.Evidence) > maxEvidence {
			return fmt.Errorf("%s: give 1 to %d evidence paths or ids", where, maxEvidence)
		}
		seen := map[string]bool{}
		for _, e := range q.Evidence {
			if !targets[e] {
				return fmt.Errorf("%s: evidence %q is no note path or turn id of the data set", where, e)
			}
			if seen[e] {
				return fmt.Errorf("%s: evidence %q repeated", where, e)
			}
			seen[e] = true
		}
		if len(q.Also) > maxAlso {
			return fmt.Errorf("%s: more than %d phrasings in also", where, maxAlso)
		}
		for _, a := range q.Also {
			if strings.TrimSpace(a) == "" {
				return fmt.Errorf("%s: an also phrasing is empty", where)
			}
		}
	}
	return nil
}

// checkNotePath accepts a clean, relative, forward-slash markdown path
// outside hidden folders (.nexus, .obsidian) and the log.
func checkNotePath(p string) error {
	switch {
	case p == "" || len(p) > maxPathLen:
		return fmt.Errorf("path %q: empty or longer than %d bytes", p, maxPathLen)
	case !strings.HasSuffix(p, ".md") || len(p) == len(".md"):
		return fmt.Errorf("path %q: not a .md file", p)
	case strings.ContainsAny(p, "\\:*?\"<>|\x00") || strings.ContainsFunc(p, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return fmt.Errorf("path %q: holds a character some systems refuse in a file name", p)
	case path.IsAbs(p) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../"):
		return fmt.Errorf("path %q: not a clean path inside the vault", p)
	case p == "log" || strings.HasPrefix(p, "log/") || strings.HasPrefix(p, "turns/"):
		return fmt.Errorf("path %q: log/ and turns/ are reserved", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if strings.HasPrefix(seg, ".") || strings.TrimSpace(seg) != seg || strings.HasSuffix(seg, ".") {
			return fmt.Errorf("path %q: a hidden folder or file, or a name ending in a space or dot", p)
		}
	}
	return nil
}

// files is the vault the data set describes: path → markdown, turns
// written as notes with their speaker and time in the frontmatter.
func (d *dataset) files() map[string]string {
	out := make(map[string]string, len(d.Notes)+len(d.Turns))
	for _, n := range d.Notes {
		out[n.Path] = n.Text
	}
	for _, t := range d.Turns {
		var b strings.Builder
		b.WriteString("---\n")
		fmt.Fprintf(&b, "speaker: %s\n", yamlString(t.Speaker))
		if !t.Time.IsZero() {
			fmt.Fprintf(&b, "date: %s\n", t.Time.UTC().Format(time.RFC3339))
		}
		b.WriteString("---\n")
		b.WriteString(t.Text)
		b.WriteString("\n")
		out[turnPath(t.ID)] = b.String()
	}
	return out
}

// evidencePaths maps a question's evidence to vault paths.
func (d *dataset) evidencePaths(q question) []string {
	out := make([]string, len(q.Evidence))
	for i, e := range q.Evidence {
		if len(d.Turns) > 0 {
			e = turnPath(e)
		}
		out[i] = e
	}
	return out
}

func yamlString(s string) string {
	b, _ := json.Marshal(s) // a JSON string is a YAML double-quoted string
	return string(b)
}
