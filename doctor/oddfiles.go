package doctor

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/vault"
)

// oddHead is how much of each note oddFiles reads: enough to see a NUL
// byte of a binary file and invalid UTF-8 near the start.
const oddHead = 8000

// oddFiles reports, as notes, files that Nexus reads in a way a person may
// not expect: a .md that is binary or not UTF-8, a byte-order mark, a file
// name in decomposed Unicode (NFD), and a symlink pointing out of the
// vault. None is broken — Obsidian and sync tools make such files — so
// each is a note, with what to do if the file matters.
func (c *checker) oddFiles(ctx context.Context) (string, []Finding, error) {
	var findings []Finding
	note := func(path, problem, fix string) {
		findings = append(findings, Finding{Severity: SeverityNote, Path: c.rel(path), Problem: problem, Fix: fix})
	}
	scanned := 0
	err := filepath.WalkDir(c.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == c.root {
				return err
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		name := d.Name()
		if path != c.root && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir // .nexus, .obsidian, .git, .trash: not notes
			}
			return nil
		}
		if path != c.root && !norm.NFC.IsNormalString(name) {
			note(path, "the name is in decomposed Unicode (NFD), as macOS may write it: [[links]] typed in composed form (NFC) may not find it on Linux or Windows",
				"rename it to the composed form: mv "+Quote(path)+" "+Quote(filepath.Join(filepath.Dir(path), norm.NFC.String(name))))
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if out, target, missing := c.outside(path); missing {
				note(path, "a symlink to "+target+", which does not exist: nothing is there to read",
					"rm "+Quote(path)+"  # removes the dangling link (it holds nothing)")
			} else if out {
				// One command that does all or nothing: the copy is made
				// beside the link first (a temp name the temp-files check
				// knows), and only then does it take the link's place.
				tmp := filepath.Join(filepath.Dir(path), "."+name+".tmp-copy")
				note(path, "a symlink pointing out of the vault (to "+target+"): Nexus does not follow it, so it is neither searched nor checked, and sync tools may copy it as a link",
					"cp -R "+Quote(target)+" "+Quote(tmp)+" && rm "+Quote(path)+" && mv "+Quote(tmp)+" "+Quote(path)+"  # replaces the link with a copy, if its content belongs in the vault; nothing to do if the link is meant")
			}
			return nil
		}
		if d.IsDir() || !strings.EqualFold(filepath.Ext(name), ".md") || !d.Type().IsRegular() {
			return nil
		}
		scanned++
		head, err := readHead(path)
		if err != nil {
			return nil // vanished or unreadable; other checks say so where it matters
		}
		edit := "open it in Obsidian or an editor and save it as UTF-8"
		switch {
		case bytes.IndexByte(head, 0) >= 0 && isLogFile(c.rel(path)):
			// A log feed with NUL bytes: the log check reports it, with
			// a fix that keeps its entries.
		case bytes.IndexByte(head, 0) >= 0:
			note(path, "not text (it holds NUL bytes, as binary files do): search skips it",
				"if it is not a note, rename it away from .md (mv "+Quote(path)+" "+Quote(strings.TrimSuffix(path, filepath.Ext(path))+".bin")+")")
		case !utf8.Valid(trimCutRune(head)):
			note(path, "not valid UTF-8 (saved in another encoding, such as EUC-KR, CP949 or Latin-1?): the invalid bytes read as �", edit+", for example: iconv -f CP949 -t UTF-8 "+Quote(path))
		case bytes.HasPrefix(head, []byte("\uFEFF")):
			problem := "starts with a byte-order mark (U+FEFF), which some tools show as a stray character (search ignores it)"
			if bytes.HasPrefix(head[3:], []byte("---")) {
				problem = "starts with a byte-order mark (U+FEFF) before its frontmatter: search skips the mark and reads the frontmatter, but Nexus's own readers of facts, IDENTITY.md and review items do not (to them the file has no frontmatter), nor do some other tools"
			}
			note(path, problem, "tail -c +4 "+Quote(path)+" > "+Quote(bomTmp(path))+" && mv "+Quote(bomTmp(path))+" "+Quote(path)+"  # drops the 3-byte mark; or "+edit+" without a byte-order mark")
		}
		return nil
	})
	if err != nil {
		return "", findings, err
	}
	sort.Slice(findings, func(i, j int) bool { return findings[i].Path < findings[j].Path })
	return plural(scanned, "note", "notes") + " checked for odd encodings, names and links", findings, nil
}

// outside reports whether the symlink at path resolves to somewhere outside
// the vault, or to nothing (missing), and where.
func (c *checker) outside(path string) (out bool, target string, missing bool) {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		link, _ := os.Readlink(path)
		return true, link, true
	}
	rel, err := filepath.Rel(c.root, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return true, target, false
	}
	return false, target, false
}

// bomTmp is the temp file the byte-order-mark fix writes beside path: a
// name the temp-files check knows, should the fix be cut short.
func bomTmp(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-nobom")
}

// isLogFile reports whether rel (vault-relative, slashes) is a file of the
// live log or the decision log.
func isLogFile(rel string) bool {
	return strings.HasPrefix(rel, "log/")
}

// readHead reads the first oddHead bytes of a file.
func readHead(path string) ([]byte, error) {
	f, err := vault.OpenRead(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, oddHead)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	return buf[:n], nil
}

// trimCutRune drops an incomplete UTF-8 sequence at the end of a head that
// readHead cut in the middle of a character.
func trimCutRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}
