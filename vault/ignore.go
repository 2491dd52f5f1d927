package vault

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TimelineFile is the derived, machine-local timeline of recent log
// entries for reading in Obsidian (SPEC §1, §11). Nexus rewrites it from
// the feeds, so it must never travel between machines: two machines would
// write two versions of it.
const TimelineFile = "log/timeline.local.md"

// machineLocal lists what is this machine's own and must never be synced
// (SPEC §11), as vault-relative slash paths; folders end in "/". The last
// entry is a name pattern: the temp files of interrupted atomic writes.
var machineLocal = []string{
	KeysDir + "/",  // private signing keys
	StateDir + "/", // cursors, witnesses, locks, snapshots, the device name
	IndexDir + "/", // the search index
	TimelineFile,   // the derived timeline
	".*.tmp-*",     // temp files of atomic writes in progress
}

// Ignore files Nexus keeps rules in.
const (
	GitIgnoreFile       = ".gitignore"
	SyncthingIgnoreFile = ".stignore"
)

// The marked block Nexus owns inside an ignore file. Lines outside it are
// the person's and keep every byte. Syncthing reads "//" as a comment and
// git reads "#".
const (
	ignoreBegin = ">>> nexus: machine-local, never synced (kept by 'nexus init' and 'nexus doctor --fix')"
	ignoreEnd   = "<<< nexus"
)

// IgnoreTarget is one ignore file Nexus keeps rules in.
type IgnoreTarget struct {
	// Path is the file's absolute path.
	Path string
	// Engine is "git" or "syncthing".
	Engine string
	// Prefix is the vault's path relative to the folder the file governs,
	// in slash form with a trailing "/", or "" when that folder is the
	// vault: a Syncthing folder shared above the vault reads only its own
	// root's .stignore.
	Prefix string
	// Missing lists the rules (of machineLocal, with Prefix) that the
	// file does not hold, inside the block or outside it. Filled by
	// [CheckIgnoreRules].
	Missing []string
	// Active reports whether the engine was found around the vault (a .git
	// at or above it, a .stfolder marker at or above it).
	Active bool
}

// IgnoreTargets returns the ignore files the vault at root needs: its own
// .gitignore and .stignore, and the .stignore of a Syncthing folder shared
// above the vault (found by Syncthing's .stfolder marker), if any.
func IgnoreTargets(root string) []IgnoreTarget {
	git := findUp(root, ".git")
	st := findUp(root, ".stfolder")
	out := []IgnoreTarget{
		{Path: filepath.Join(root, GitIgnoreFile), Engine: "git", Active: git != ""},
		{Path: filepath.Join(root, SyncthingIgnoreFile), Engine: "syncthing", Active: st == root},
	}
	if st != "" && st != root {
		if rel, err := filepath.Rel(st, root); err == nil {
			out = append(out, IgnoreTarget{Path: filepath.Join(st, SyncthingIgnoreFile), Engine: "syncthing", Prefix: filepath.ToSlash(rel) + "/", Active: true})
		}
	}
	return out
}

// findUp returns the nearest folder at or above dir that holds name, or "".
func findUp(dir, name string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, name)); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// rules returns the lines of Nexus's block for one target.
func (t IgnoreTarget) rules() []string {
	out := make([]string, 0, len(machineLocal))
	for _, p := range machineLocal {
		if strings.HasPrefix(p, ".*") {
			// A name pattern: it matches at any depth in both syntaxes.
			out = append(out, p)
			continue
		}
		p = "/" + t.Prefix + p
		if t.Engine == "syncthing" {
			// Syncthing matches a folder pattern with its contents and
			// does not take a trailing slash.
			p = strings.TrimSuffix(p, "/")
		}
		out = append(out, p)
	}
	return out
}

func (t IgnoreTarget) comment() string {
	if t.Engine == "syncthing" {
		return "//"
	}
	return "#"
}

// block renders Nexus's block with the given line end.
func (t IgnoreTarget) block(eol string) []byte {
	var b bytes.Buffer
	b.WriteString(t.comment() + " " + ignoreBegin + eol)
	for _, r := range t.rules() {
		b.WriteString(r + eol)
	}
	b.WriteString(t.comment() + " " + ignoreEnd + eol)
	return b.Bytes()
}

// CheckIgnoreRules returns the targets of [IgnoreTargets] with Missing
// filled in. A rule counts as present when any line of the file, inside
// Nexus's block or not, names the path or a folder above it (a person who
// excludes all of .nexus/ also excludes its keys).
func CheckIgnoreRules(root string) ([]IgnoreTarget, error) {
	targets := IgnoreTargets(root)
	for i := range targets {
		data, err := ReadFile(targets[i].Path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read %s: %w", targets[i].Path, err)
		}
		targets[i].Missing = missingRules(targets[i], data)
	}
	return targets, nil
}

func missingRules(t IgnoreTarget, data []byte) []string {
	have := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, t.comment()) {
			continue
		}
		have[normRule(line)] = true
	}
	var missing []string
	for _, r := range t.rules() {
		n := normRule(r)
		covered := have[n]
		for d := n; !covered && strings.Contains(d, "/"); {
			d = d[:strings.LastIndex(d, "/")]
			covered = have[d]
		}
		if !covered {
			missing = append(missing, r)
		}
	}
	return missing
}

// normRule reduces the spellings of one rule to one form: no leading or
// trailing slash, no trailing "/**".
func normRule(r string) string {
	r = strings.TrimPrefix(r, "(?d)")
	r = strings.TrimSuffix(r, "/**")
	return strings.Trim(r, "/")
}

// EnsureIgnoreRules writes Nexus's block of rules for what is machine-local
// (machineLocal) into every file of [IgnoreTargets]: it creates the file,
// appends the block to a file without it, or brings an existing block up to
// date. Every line outside the block keeps its bytes, the file's line ends
// (LF or CRLF) are kept, and a file already up to date is not touched, so
// it is safe to run at every start. Each write is an atomic
// compare-and-swap, started over if a person saves the file meanwhile. It
// returns the absolute paths it changed.
func EnsureIgnoreRules(root string) ([]string, error) {
	var changed []string
	for _, t := range IgnoreTargets(root) {
		did, err := ensureIgnoreFile(t)
		if err != nil {
			return changed, err
		}
		if did {
			changed = append(changed, t.Path)
		}
	}
	return changed, nil
}

func ensureIgnoreFile(t IgnoreTarget) (bool, error) {
	for attempt := 0; ; attempt++ {
		old, err := ReadFile(t.Path)
		if errors.Is(err, fs.ErrNotExist) {
			old = nil
		} else if err != nil {
			return false, fmt.Errorf("read %s: %w", t.Path, err)
		}
		data := withIgnoreBlock(t, old)
		if old != nil && bytes.Equal(data, old) {
			return false, nil
		}
		err = ReplaceIf(t.Path, old, data, 0o644)
		if errors.Is(err, ErrConflict) && attempt < CASAttempts {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("write %s: %w", t.Path, err)
		}
		return true, nil
	}
}

// withIgnoreBlock returns old with Nexus's block added or replaced.
func withIgnoreBlock(t IgnoreTarget, old []byte) []byte {
	eol := "\n"
	if bytes.Contains(old, []byte("\r\n")) {
		eol = "\r\n"
	}
	block := t.block(eol)
	begin := []byte(t.comment() + " >>> nexus")
	end := []byte(t.comment() + " " + ignoreEnd)
	start, stop := -1, -1
	for off := 0; off < len(old); {
		lineEnd := bytes.IndexByte(old[off:], '\n')
		next := len(old)
		if lineEnd >= 0 {
			next = off + lineEnd + 1
		}
		line := bytes.TrimSpace(old[off:next])
		switch {
		case bytes.HasPrefix(line, begin):
			// The last begin line before the end: an orphaned begin line
			// above (a person deleted its end) stays as it is.
			start = off
		case start >= 0 && bytes.Equal(line, end):
			stop = next
		}
		if stop >= 0 {
			break
		}
		off = next
	}
	if start >= 0 && stop >= 0 {
		out := append([]byte(nil), old[:start]...)
		out = append(out, block...)
		return append(out, old[stop:]...)
	}
	out := append([]byte(nil), old...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, eol...)
	}
	if len(out) > 0 {
		out = append(out, eol...) // a blank line before the block
	}
	return append(out, block...)
}
