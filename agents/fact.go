package agents

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

// Fact types (SPEC §3).
const (
	FactUser      = "user"
	FactFeedback  = "feedback"
	FactProject   = "project"
	FactReference = "reference"
)

// FactTypes returns the valid fact types, in the order they are documented.
func FactTypes() []string {
	return []string{FactUser, FactFeedback, FactProject, FactReference}
}

// Limits on what a fact may hold. Names and descriptions count code points,
// so Korean text gets as much room as ASCII; the body limit is in bytes and
// keeps a fact "short" as SPEC §3 asks.
const (
	MaxFactNameRunes        = 120
	MaxFactDescriptionRunes = 300
	MaxFactSourceRunes      = 300
	MaxFactBodyBytes        = 32 << 10
)

// FactInput is what a caller gives to create or update a fact.
type FactInput struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Type        string `json:"type"`
	Body        string `json:"body"`
	// Source says where the fact came from: a session, a log entry, a
	// review id. Optional.
	Source string `json:"source,omitempty"`
	// Update lets the write replace an existing fact of the same name
	// (keeping its created time and its other frontmatter keys). Without
	// it, a duplicate name is refused with [ErrFactExists].
	Update bool `json:"update,omitempty"`
}

// Fact is one fact file, agents/AGENT/memory/SLUG.md.
type Fact struct {
	Agent       string    `json:"agent"`
	Slug        string    `json:"slug"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Type        string    `json:"type"`
	Created     time.Time `json:"created"`
	Updated     time.Time `json:"updated"`
	Source      string    `json:"source,omitempty"`
	Body        string    `json:"body,omitempty"`
	// Path is the vault-relative path of the file.
	Path string `json:"path"`
}

// FactPath returns the vault-relative path of an agent's fact file.
func FactPath(agent, slug string) string { return HomePath(agent, FactsDir+"/"+slug+".md") }

// ArchivedFactsDir is where removed facts go: review/archive/facts/AGENT/.
func ArchivedFactsDir(agent string) string { return vault.ArchiveDir + "/facts/" + agent }

// Check validates a fact input without writing anything: one-line name,
// description and source within their limits, a known type, a body of valid
// text within MaxFactBodyBytes, a name that slugs to something, and the
// security scan of SPEC §2 over every field.
func (in FactInput) Check() (FactInput, error) {
	in.Name = strings.TrimSpace(norm.NFC.String(in.Name))
	in.Description = strings.TrimSpace(norm.NFC.String(in.Description))
	in.Type = strings.ToLower(strings.TrimSpace(in.Type))
	in.Source = strings.TrimSpace(norm.NFC.String(in.Source))
	in.Body = strings.TrimSpace(norm.NFC.String(strings.ReplaceAll(in.Body, "\r\n", "\n")))
	if err := checkLine("name", in.Name, MaxFactNameRunes, true); err != nil {
		return in, err
	}
	if err := checkLine("description", in.Description, MaxFactDescriptionRunes, true); err != nil {
		return in, err
	}
	if err := checkLine("source", in.Source, MaxFactSourceRunes, false); err != nil {
		return in, err
	}
	if !validType(in.Type) {
		return in, fmt.Errorf("fact type %q: must be one of %s: %w", in.Type, strings.Join(FactTypes(), ", "), vault.ErrInvalid)
	}
	if err := vault.CheckText("body", in.Body, MaxFactBodyBytes); err != nil {
		return in, err
	}
	if _, err := Slugify(in.Name); err != nil {
		return in, err
	}
	for _, f := range []struct{ field, s string }{{"name", in.Name}, {"description", in.Description}, {"source", in.Source}, {"body", in.Body}} {
		if err := scanFactText(f.s); err != nil {
			return in, fmt.Errorf("fact %s: %w", f.field, err)
		}
	}
	return in, nil
}

func validType(t string) bool {
	for _, k := range FactTypes() {
		if t == k {
			return true
		}
	}
	return false
}

func checkLine(field, s string, maxRunes int, required bool) error {
	if s == "" && !required {
		return nil
	}
	if err := vault.CheckText(field, s, 0); err != nil {
		return err
	}
	if strings.ContainsAny(s, "\r\n") {
		return fmt.Errorf("%s must be one line: %w", field, vault.ErrInvalid)
	}
	if n := utf8.RuneCountInString(s); n > maxRunes {
		return fmt.Errorf("%s is %d characters, more than the %d allowed: %w", field, n, maxRunes, vault.ErrTooLarge)
	}
	return nil
}

// ParseFact parses a fact file. It is lenient, as fact files may be written
// by hand in Obsidian: without frontmatter the whole file is the body,
// malformed YAML is ignored; a missing name falls back to the slug and a
// missing description to the body's first line. It fails only on text that
// is not UTF-8.
func ParseFact(slug string, data []byte) (Fact, error) {
	f := Fact{Slug: slug}
	if !utf8.Valid(data) {
		return f, fmt.Errorf("fact %s is not UTF-8 text: %w", slug, vault.ErrInvalid)
	}
	props, body, err := vault.ParseFrontmatter(data)
	if err != nil {
		props = map[string]any{}
	}
	f.Name = oneLine(propString(props["name"]))
	f.Description = oneLine(propString(props["description"]))
	f.Type = strings.ToLower(oneLine(propString(props["type"])))
	f.Source = oneLine(propString(props["source"]))
	f.Created = propTime(props["created"])
	f.Updated = propTime(props["updated"])
	f.Body = strings.TrimSpace(strings.ReplaceAll(string(body), "\r\n", "\n"))
	if f.Name == "" {
		f.Name = slug
	}
	if f.Description == "" {
		f.Description = firstLine(f.Body)
	}
	return f, nil
}

func propString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	case []any:
		parts := make([]string, 0, len(x))
		for _, p := range x {
			parts = append(parts, propString(p))
		}
		return strings.Join(parts, ", ")
	default:
		return fmt.Sprint(x)
	}
}

func propTime(v any) time.Time {
	switch x := v.(type) {
	case time.Time:
		return x.UTC()
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02"} {
			if t, err := time.Parse(layout, strings.TrimSpace(x)); err == nil {
				return t.UTC()
			}
		}
	}
	return time.Time{}
}

// oneLine flattens whitespace runs (newlines included) to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// firstLine returns the first line of body text that is not a heading
// marker alone, without leading '#', cut to 120 code points.
func firstLine(body string) string {
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#"))
		if l == "" {
			continue
		}
		if utf8.RuneCountInString(l) > 120 {
			r := []rune(l)
			l = strings.TrimSpace(string(r[:119])) + "…"
		}
		return oneLine(l)
	}
	return ""
}

// renderFact formats a new fact file.
func renderFact(in FactInput, created, updated time.Time) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("---\n")
	for _, kv := range [][2]string{
		{"name", in.Name},
		{"description", in.Description},
		{"type", in.Type},
		{"created", created.UTC().Format(time.RFC3339)},
		{"updated", updated.UTC().Format(time.RFC3339)},
		{"source", in.Source},
	} {
		if kv[1] == "" {
			continue
		}
		line, err := yamlLine(kv[0], kv[1])
		if err != nil {
			return nil, err
		}
		b.WriteString(line + "\n")
	}
	b.WriteString("---\n")
	b.WriteString(in.Body)
	b.WriteString("\n")
	return b.Bytes(), nil
}

// yamlLine renders `key: value` with the value quoted only when YAML needs
// it (times are quoted so every reader sees the same string).
func yamlLine(key, value string) (string, error) {
	out, err := yaml.Marshal(map[string]string{key: value})
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", key, err)
	}
	s := strings.TrimRight(string(out), "\n")
	if strings.Contains(s, "\n") {
		return "", fmt.Errorf("property %s must be one line: %w", key, vault.ErrInvalid)
	}
	return s, nil
}

// updateFactBytes rewrites an existing fact file for an update: only the
// description, type, updated and source keys change (with
// [vault.SetProperty], so other keys keep their bytes), and the body is
// replaced.
func updateFactBytes(old []byte, in FactInput, now time.Time) ([]byte, error) {
	data := old
	var err error
	for _, kv := range [][2]string{
		{"description", in.Description},
		{"type", in.Type},
		{"updated", now.UTC().Format(time.RFC3339)},
		{"source", in.Source},
	} {
		if kv[1] == "" {
			continue
		}
		if data, err = vault.SetProperty(data, kv[0], kv[1]); err != nil {
			return nil, err
		}
	}
	fm, _, ok := vault.SplitFrontmatter(data)
	if !ok {
		return nil, fmt.Errorf("fact frontmatter lost while updating: %w", vault.ErrInvalid)
	}
	nl := "\n"
	if bytes.HasPrefix(data, []byte("---\r\n")) {
		nl = "\r\n"
	}
	body := in.Body
	if nl != "\n" {
		body = strings.ReplaceAll(body, "\n", nl)
	}
	return []byte("---" + nl + string(fm) + "---" + nl + body + nl), nil
}

// WriteFact creates the fact in.Name for agent, or with in.Update replaces
// the existing fact of that name, and brings memory/INDEX.md up to date. It
// validates and scans first ([FactInput.Check]); a new fact beyond the index
// limit (config memory_index_line_limit) is refused with [ErrIndexFull].
// The slug is [Slugify] of the name, made unique with -2, -3... if another
// fact file already has it.
//
// Writers of one agent's facts are serialised by a cross-process lock. The
// index is updated from a cache of the fact files (under .nexus/state/), so a
// write does not rescan the folder; changes a person makes by hand are
// picked up by [SyncIndex].
func WriteFact(v *vault.Vault, agent string, in FactInput, now time.Time) (Fact, error) {
	if err := identity.ValidName(agent); err != nil {
		return Fact{}, err
	}
	in, err := in.Check()
	if err != nil {
		return Fact{}, err
	}
	st, unlock, err := openFactStore(v, agent)
	if err != nil {
		return Fact{}, err
	}
	defer unlock()
	now = now.UTC().Truncate(time.Second)

	if slug, ok := st.byName(in.Name); ok {
		if !in.Update {
			return Fact{}, fmt.Errorf("fact %q already exists as %s (write it with update set, 'nexus fact write --update', to replace it, or choose another name): %w", in.Name, FactPath(agent, slug), ErrFactExists)
		}
		f, err := st.update(slug, in, now)
		if err != nil {
			return Fact{}, err
		}
		// The update is written; an index over its limit (facts a person
		// added by hand) is capped and reported by the syncs, not here.
		if err := st.flush(); err != nil && !errors.Is(err, ErrIndexFull) {
			return f, err
		}
		return f, nil
	}
	if lim := v.Config().MemoryIndexLineLimit; st.entries.len()+1 > lim {
		return Fact{}, st.fullError(lim)
	}
	f, err := st.create(in, now)
	if err != nil {
		return Fact{}, err
	}
	return f, st.flush()
}

// ReadFact reads one fact of agent by slug (or, failing that, by name).
func ReadFact(v *vault.Vault, agent, slugOrName string) (Fact, error) {
	if err := identity.ValidName(agent); err != nil {
		return Fact{}, err
	}
	slug := norm.NFC.String(strings.TrimSuffix(strings.TrimSpace(slugOrName), ".md"))
	if validSlug(slug) == nil {
		if f, err := readFactFile(v, agent, slug); !errors.Is(err, ErrNoFact) {
			return f, err
		}
	}
	// By name, through the cache (kept in step first).
	facts, err := ListFacts(v, agent)
	if err != nil {
		return Fact{}, err
	}
	for _, f := range facts {
		if sameName(f.Name, slugOrName) {
			return readFactFile(v, agent, f.Slug)
		}
	}
	return Fact{}, fmt.Errorf("fact %q of %s: %w", slugOrName, agent, ErrNoFact)
}

func readFactFile(v *vault.Vault, agent, slug string) (Fact, error) {
	p, err := v.Path(FactPath(agent, slug))
	if err != nil {
		if errors.Is(err, vault.ErrUnsafePath) {
			return Fact{}, fmt.Errorf("fact %q of %s: %w", slug, agent, err)
		}
		return Fact{}, fmt.Errorf("fact %q: %w", slug, vault.ErrInvalid)
	}
	data, err := vault.ReadStable(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Fact{}, fmt.Errorf("fact %q of %s: %w", slug, agent, ErrNoFact)
	}
	if err != nil {
		return Fact{}, fmt.Errorf("read fact %s: %w", slug, err)
	}
	f, err := ParseFact(slug, data)
	f.Agent, f.Path = agent, FactPath(agent, slug)
	return f, err
}

// ListFacts returns agent's facts (without bodies) in index order, after
// bringing the index in step with the files ([SyncIndex]).
func ListFacts(v *vault.Vault, agent string) ([]Fact, error) {
	if err := identity.ValidName(agent); err != nil {
		return nil, err
	}
	st, unlock, readOnly, err := openFactStoreRead(v, agent)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := st.rescan(); err != nil {
		return nil, err
	}
	if !readOnly { // without write access: listed from the files, INDEX.md left as it is
		if err := st.flush(); err != nil && !errors.Is(err, ErrIndexFull) && !vault.IsReadOnly(err) {
			return nil, err
		}
	}
	c := st.entries
	out := make([]Fact, 0, c.len())
	for _, file := range c.files {
		e := c.m[file]
		slug := strings.TrimSuffix(file, ".md")
		out = append(out, Fact{Agent: agent, Slug: slug, Name: e.Name, Description: e.Description, Type: e.Type,
			Created: e.Created, Updated: e.Updated, Source: e.Source, Path: FactPath(agent, slug)})
	}
	return out, nil
}

// RemoveFact archives one fact: the file moves, byte for byte, to
// review/archive/facts/AGENT/SLUG.TIMESTAMP.md and leaves the index. Nothing
// is destroyed. It returns the archive's vault-relative path.
func RemoveFact(v *vault.Vault, agent, slug string, now time.Time) (string, error) {
	if err := identity.ValidName(agent); err != nil {
		return "", err
	}
	f, err := ReadFact(v, agent, slug)
	if err != nil {
		return "", err
	}
	st, unlock, err := openFactStore(v, agent)
	if err != nil {
		return "", err
	}
	defer unlock()
	stamp := now.UTC().Format("20060102T150405Z")
	var dst, dstAbs string
	for i := 1; ; i++ {
		// SLUG.TIME.md, or SLUG.TIME-2.md if the same fact was archived
		// within the same second.
		dst = path.Join(ArchivedFactsDir(agent), f.Slug+"."+stamp+".md")
		if i > 1 {
			dst = path.Join(ArchivedFactsDir(agent), f.Slug+"."+stamp+"-"+strconv.Itoa(i)+".md")
		}
		if dstAbs, err = v.Path(dst); err != nil {
			return "", err
		}
		if _, err := vault.Lstat(dstAbs); errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	src := v.MustPath(f.Path)
	if err := vault.MkdirAll(filepath.Dir(dstAbs), 0o755); err != nil {
		return "", fmt.Errorf("archive fact %s: %w", f.Slug, err)
	}
	if err := vault.Rename(src, dstAbs); err != nil {
		return "", fmt.Errorf("archive fact %s: %w", f.Slug, err)
	}
	if err := vault.SyncDir(filepath.Dir(dstAbs)); err != nil {
		return "", err
	}
	st.entries.del(f.Slug + ".md")
	if err := st.flush(); err != nil && !errors.Is(err, ErrIndexFull) {
		return dst, err
	}
	return dst, nil
}
