package agents

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

// PinnedKey is the frontmatter key that exempts a fact from the curator's
// archive proposals: "pinned: true". It lives in the fact file, so it
// travels with the vault to every machine.
const PinnedKey = "pinned"

// FactPinned reports whether a fact file's frontmatter says pinned: true
// (also "yes" or a quoted "true", as a person may type it).
func FactPinned(data []byte) bool {
	fm, _, ok := vault.SplitFrontmatter(data)
	if !ok {
		return false
	}
	for _, line := range strings.Split(string(fm), "\n") {
		k, val, found := strings.Cut(strings.TrimRight(line, "\r"), ":")
		if !found || line == "" || line[0] == ' ' || line[0] == '\t' || strings.TrimSpace(k) != PinnedKey {
			continue
		}
		val, _, _ = strings.Cut(val, " #")
		switch strings.ToLower(strings.Trim(strings.TrimSpace(val), `"'`)) {
		case "true", "yes", "on":
			return true
		}
		return false
	}
	return false
}

// PinFact sets (pinned true) or removes (false) a fact's pinned: true
// property. Only that key's line changes; every other byte of the file is
// kept, and a person's save at the same moment is never overwritten
// (compare-and-swap). It returns the fact and whether the file changed.
func PinFact(v *vault.Vault, agent, slugOrName string, pinned bool) (Fact, bool, error) {
	if err := identity.ValidName(agent); err != nil {
		return Fact{}, false, err
	}
	f, err := ReadFact(v, agent, slugOrName)
	if err != nil {
		return Fact{}, false, err
	}
	_, unlock, err := openFactStore(v, agent)
	if err != nil {
		return Fact{}, false, err
	}
	defer unlock()
	abs := v.MustPath(f.Path)
	for attempt := 1; ; attempt++ {
		old, err := vault.ReadStable(abs)
		if err != nil {
			return f, false, fmt.Errorf("read fact %s: %w", f.Slug, err)
		}
		if FactPinned(old) == pinned {
			return f, false, nil
		}
		var data []byte
		if pinned {
			data, err = setBoolProperty(old, PinnedKey)
		} else {
			data = dropProperty(old, PinnedKey)
		}
		if err != nil {
			return f, false, err
		}
		err = vault.ReplaceIf(abs, old, data, 0o644)
		if errors.Is(err, vault.ErrConflict) && attempt < maxCASAttempts {
			continue
		}
		if !vault.Written(err) {
			return f, false, fmt.Errorf("write fact %s: %w", f.Slug, err)
		}
		return f, true, nil
	}
}

// setBoolProperty sets key: true (a YAML boolean, which Obsidian shows as a
// checkbox): the key's lines are replaced, or the line is added before the
// closing fence; every other byte is kept. A note without frontmatter gets
// a new block in front.
func setBoolProperty(data []byte, key string) ([]byte, error) {
	fm, body, ok := vault.SplitFrontmatter(data)
	if !ok {
		return append([]byte("---\n"+key+": true\n---\n"), data...), nil
	}
	head := bytes.IndexByte(data, '\n') + 1
	nl := "\n"
	if bytes.HasSuffix(data[:head], []byte("\r\n")) {
		nl = "\r\n"
	}
	line := key + ": true" + nl
	closing := data[head+len(fm) : len(data)-len(body)]
	kept := dropProperty(data, key)
	var out bytes.Buffer
	if len(kept) == len(data) {
		out.Write(data[:head+len(fm)])
		if len(fm) > 0 && fm[len(fm)-1] != '\n' {
			out.WriteString(nl)
		}
	} else {
		// Replace in place: keep the key where the person had it.
		lines := bytes.SplitAfter(fm, []byte("\n"))
		out.Write(data[:head])
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			if len(l) > 0 && l[0] != ' ' && l[0] != '\t' {
				if k, _, found := bytes.Cut(l, []byte(":")); found && strings.TrimSpace(string(k)) == key {
					out.WriteString(line)
					for i+1 < len(lines) && len(lines[i+1]) > 0 && (lines[i+1][0] == ' ' || lines[i+1][0] == '\t') {
						i++
					}
					continue
				}
			}
			out.Write(l)
		}
		out.Write(closing)
		out.Write(body)
		return out.Bytes(), nil
	}
	out.WriteString(line)
	out.Write(closing)
	out.Write(body)
	return out.Bytes(), nil
}

// dropProperty removes a top-level frontmatter key and its continuation
// lines, keeping every other byte.
func dropProperty(data []byte, key string) []byte {
	fm, body, ok := vault.SplitFrontmatter(data)
	if !ok {
		return data
	}
	head := bytes.IndexByte(data, '\n') + 1
	closing := data[head+len(fm) : len(data)-len(body)]
	lines := bytes.SplitAfter(fm, []byte("\n"))
	var out bytes.Buffer
	out.Write(data[:head])
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if len(l) > 0 && l[0] != ' ' && l[0] != '\t' {
			if k, _, found := bytes.Cut(l, []byte(":")); found && strings.TrimSpace(string(k)) == key {
				for i+1 < len(lines) && len(lines[i+1]) > 0 && (lines[i+1][0] == ' ' || lines[i+1][0] == '\t') {
					i++
				}
				continue
			}
		}
		out.Write(l)
	}
	out.Write(closing)
	out.Write(body)
	return out.Bytes()
}
