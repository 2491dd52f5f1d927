package vault

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// Conflict-copy engines, as [ParseConflictName] names them.
const (
	EngineSyncthing = "syncthing" // NAME.sync-conflict-20261201-101500-ABCDEFG.md
	EngineDropbox   = "dropbox"   // NAME (Ann's conflicted copy 2026-12-01).md (also Nextcloud)
	EngineNumbered  = "numbered"  // NAME 2.md (iCloud Drive, Finder, some Obsidian Sync setups)
	EngineGit       = "git"       // NAME.md.orig left by git mergetool
)

// ConflictName is a file name a sync tool gave to the losing side of a
// conflict.
type ConflictName struct {
	// Original is the name of the file it is a copy of, in the same folder.
	Original string
	// Engine is one of the Engine constants.
	Engine string
	// Stamp is the time part the engine put in the name, as written
	// ("20261201-101500" for Syncthing), or "".
	Stamp string
	// Device is the short device id Syncthing put in the name, or "".
	Device string
}

// ParseConflictName recognises the file names sync tools give to conflict
// copies, from the base name alone:
//
//   - Syncthing: STEM.sync-conflict-YYYYMMDD-HHMMSS-DEVICE.EXT (the device
//     part is missing in old versions);
//   - Dropbox and Nextcloud: STEM (… conflicted copy …).EXT;
//   - iCloud Drive and Finder duplicates: STEM N.EXT with N from 2 to 99;
//   - git: NAME.git-conflict-HASH.EXT, a version holding conflict markers
//     that Nexus set aside ([GitConflictName]), and git mergetool's
//     leftover NAME.orig.
//
// The last two are ordinary names too ("Chapter 2.md"), so callers treat
// them as conflict copies only when Original exists beside them and is a
// file with several writers. Strict is false for them.
func ParseConflictName(name string) (c ConflictName, strict, ok bool) {
	if c, ok := parseSyncthing(name); ok {
		return c, true, true
	}
	ext := extOf(name)
	stem := name[:len(name)-len(ext)]
	if i := strings.LastIndex(stem, gitConflict); i > 0 && len(stem)-i-len(gitConflict) == 8 && isHex(stem[i+len(gitConflict):]) {
		return ConflictName{Original: stem[:i] + ext, Engine: EngineGit, Stamp: stem[i+len(gitConflict):]}, true, true
	}
	if i := strings.LastIndex(stem, " ("); i > 0 && strings.HasSuffix(stem, ")") &&
		strings.Contains(strings.ToLower(stem[i:]), "conflicted copy") {
		return ConflictName{Original: stem[:i] + ext, Engine: EngineDropbox}, true, true
	}
	if orig, found := strings.CutSuffix(name, ".orig"); found && orig != "" && !strings.HasSuffix(orig, ".") {
		return ConflictName{Original: orig, Engine: EngineGit}, false, true
	}
	if i := strings.LastIndexByte(stem, ' '); i > 0 {
		n := stem[i+1:]
		if len(n) >= 1 && len(n) <= 2 && allDigits(n) && n[0] != '0' && n != "1" {
			return ConflictName{Original: stem[:i] + ext, Engine: EngineNumbered}, false, true
		}
	}
	return ConflictName{}, false, false
}

// IsConflictCopy reports whether name is certainly a sync tool's conflict
// copy (Syncthing or Dropbox style). Listings of Nexus's own folders skip
// such files: they are not items, facts or feeds of their own.
func IsConflictCopy(name string) bool {
	_, strict, ok := ParseConflictName(name)
	return ok && strict
}

const syncConflict = ".sync-conflict-"

// gitConflict marks a version of a file that held git conflict markers,
// set aside as NAME.git-conflict-HASH.EXT (8 hex digits of its SHA-256) so
// that the file itself can be read meanwhile.
const gitConflict = ".git-conflict-"

// GitConflictName returns the name a version of the file name, holding git
// conflict markers, is set aside under: NAME.git-conflict-HASH.EXT, where
// HASH is hash8, 8 lower-case hex digits.
func GitConflictName(name, hash8 string) string {
	ext := extOf(name)
	return name[:len(name)-len(ext)] + gitConflict + hash8 + ext
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return s != ""
}

func parseSyncthing(name string) (ConflictName, bool) {
	i := strings.Index(name, syncConflict)
	if i < 0 {
		return ConflictName{}, false
	}
	rest := name[i+len(syncConflict):]
	// YYYYMMDD-HHMMSS
	if len(rest) < 15 || !allDigits(rest[:8]) || rest[8] != '-' || !allDigits(rest[9:15]) {
		return ConflictName{}, false
	}
	c := ConflictName{Engine: EngineSyncthing, Stamp: rest[:15]}
	rest = rest[15:]
	if len(rest) >= 8 && rest[0] == '-' && isDeviceID(rest[1:8]) && (len(rest) == 8 || rest[8] == '.') {
		c.Device = rest[1:8]
		rest = rest[8:]
	}
	if rest != "" && rest[0] != '.' {
		return ConflictName{}, false
	}
	c.Original = name[:i] + rest
	if name[:i] == "" && rest == "" {
		return ConflictName{}, false
	}
	return c, true
}

func isDeviceID(s string) bool {
	for i := 0; i < len(s); i++ {
		if !(s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9') {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// extOf is filepath.Ext on a base name, except that a name that is only an
// extension (".stignore") has none.
func extOf(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 {
		return ""
	}
	return name[i:]
}

// Marker lines git writes into a file it could not merge (the default
// marker size of 7).
var (
	markerOurs   = []byte("<<<<<<<")
	markerBase   = []byte("|||||||")
	markerSep    = []byte("=======")
	markerTheirs = []byte(">>>>>>>")
)

// ConflictSides is a file holding git conflict markers, split into the two
// versions a person would get by keeping one side of every conflict.
type ConflictSides struct {
	// Ours is the file with every conflict resolved to its first side
	// (HEAD, the branch merged into), Theirs with every one resolved to its
	// second. Text outside the conflicts is in both.
	Ours, Theirs []byte
	// Base is the file with every conflict resolved to the common ancestor,
	// when git wrote it (merge.conflictStyle diff3 or zdiff3); nil
	// otherwise.
	Base []byte
	// Conflicts counts the complete conflict blocks.
	Conflicts int
}

// HasConflictMarkers reports whether data holds a complete git conflict
// block: a line starting with "<<<<<<<", later a line "=======", later a
// line starting with ">>>>>>>". Blocks inside fenced code (``` or ~~~) are
// ignored, so a note that shows what a conflict looks like is not one.
func HasConflictMarkers(data []byte) bool {
	if !bytes.Contains(data, markerOurs) {
		return false
	}
	s, _, _ := SplitConflictMarkers(data)
	return s.Conflicts > 0
}

// SplitConflictMarkers splits data holding git conflict markers into its
// sides. found reports whether any conflict block starts; ok whether every
// block is well formed (a start, optionally a base, a separator and an
// end, in that order), so that the sides can be trusted. Text outside the
// blocks keeps its bytes; CRLF line ends are kept as they are.
func SplitConflictMarkers(data []byte) (s ConflictSides, ok, found bool) {
	if !bytes.Contains(data, markerOurs) {
		return ConflictSides{}, false, false
	}
	const (
		outside = iota
		inOurs
		inBase
		inTheirs
	)
	var ours, theirs, base bytes.Buffer
	hasBase := false
	state := outside
	fence := ""
	ok = true
	for rest := data; len(rest) > 0; {
		var line []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			line, rest = rest, nil
		}
		bare := bytes.TrimRight(line, "\r\n")
		if state == outside {
			if f := fenceOf(bare); f != "" {
				switch {
				case fence == "":
					fence = f
				case strings.HasPrefix(f, fence[:1]) && len(f) >= len(fence):
					fence = ""
				}
			}
			if fence == "" && isMarker(bare, markerOurs) {
				state = inOurs
				found = true
				continue
			}
			ours.Write(line)
			theirs.Write(line)
			base.Write(line)
			continue
		}
		switch {
		case isMarker(bare, markerOurs):
			ok = false // a block opened inside a block
		case state == inOurs && isMarker(bare, markerBase):
			state, hasBase = inBase, true
			continue
		case (state == inOurs || state == inBase) && bytes.Equal(bare, markerSep):
			state = inTheirs
			continue
		case state == inTheirs && isMarker(bare, markerTheirs):
			state = outside
			s.Conflicts++
			continue
		case isMarker(bare, markerTheirs) || isMarker(bare, markerBase):
			ok = false // out of order
		}
		switch state {
		case inOurs:
			ours.Write(line)
		case inBase:
			base.Write(line)
		case inTheirs:
			theirs.Write(line)
		}
	}
	if state != outside {
		ok = false
	}
	if !found {
		return ConflictSides{}, false, false
	}
	s.Ours, s.Theirs = ours.Bytes(), theirs.Bytes()
	if hasBase {
		s.Base = base.Bytes()
	}
	return s, ok, found
}

// isMarker reports whether line is the marker alone or the marker, a space
// and a label ("<<<<<<< HEAD").
func isMarker(line, marker []byte) bool {
	return bytes.HasPrefix(line, marker) && (len(line) == len(marker) || line[len(marker)] == ' ')
}

// fenceOf returns the fence a line opens or closes (``` or ~~~, possibly
// longer, up to three spaces of indent), or "".
func fenceOf(line []byte) string {
	t := bytes.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return string(t[:n])
}

// SetAsideConflictedConfig handles a .nexus/config.yaml holding git
// conflict markers, which no command can read: it saves that version
// beside it as .nexus/config.git-conflict-HASH.yaml and writes git's first
// side in its place, so that the vault opens again. The choice between the
// sides is then filed for a person by conflicts.Resolve, which
// sees the saved version as a conflict copy. It returns the vault-relative
// path of the saved version, or "" when the config holds no markers (or
// its first side does not parse either, and a person must edit it).
func SetAsideConflictedConfig(root string) (string, error) {
	p := filepath.Join(root, filepath.FromSlash(ConfigFile))
	data, err := ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", ConfigFile, err)
	}
	sides, ok, _ := SplitConflictMarkers(data)
	if !ok || sides.Conflicts == 0 {
		return "", nil
	}
	if _, err := parseConfig(sides.Ours); err != nil {
		return "", nil
	}
	sum := sha256.Sum256(data)
	name := GitConflictName("config.yaml", hex.EncodeToString(sum[:4]))
	aside := filepath.Join(root, filepath.FromSlash(NexusDir), name)
	if err := ReplaceIf(aside, nil, data, 0o644); err != nil && !errors.Is(err, ErrConflict) {
		return "", fmt.Errorf("set aside %s: %w", ConfigFile, err)
	}
	if err := ReplaceIf(p, data, sides.Ours, 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", ConfigFile, err)
	}
	return NexusDir + "/" + name, nil
}
