package links

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	vaultfs "github.com/nexus-memory/nexus/vault" // the name vault is a test helper here
)

// Result is a note's links both ways.
type Result struct {
	// Note is the vault path of the note.
	Note string `json:"note"`
	// Outgoing are the note's links in the order they are written; an
	// unresolved one has Path "".
	Outgoing []Link `json:"outgoing"`
	// Backlinks are the links in other files (or the note itself) that
	// resolve to the note, by file then line.
	Backlinks []Link `json:"backlinks"`
}

// Vault is the list of a vault's files, for resolving links.
type Vault struct {
	root   string
	files  []string         // vault paths as on disk, slash-separated
	byKey  map[string]int   // folded path -> index in files
	byName map[string][]int // folded base name (".md" dropped) -> files
}

// fold is how Obsidian compares names: NFC, case-insensitive.
func fold(s string) string { return strings.ToLower(norm.NFC.String(s)) }

// Scan lists every regular file of the vault at root outside dot-folders
// (those Obsidian hides, .obsidian and .nexus among them); symlinks are
// left out, as the search index leaves them out.
func Scan(root string) (*Vault, error) {
	v := &Vault{root: root, byKey: map[string]int{}, byName: map[string][]int{}}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // unreadable folder: its files are not in the vault view
		}
		if p == root {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // a folder entry, or a symlink: it could point outside the vault (as the index, links skip them)
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil
		}
		v.add(filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan vault: %w", err)
	}
	return v, nil
}

// NewVault is a Vault of the given vault paths, for tests and callers that
// already hold the list; it reads no files.
func NewVault(root string, files []string) *Vault {
	v := &Vault{root: root, byKey: map[string]int{}, byName: map[string][]int{}}
	for _, f := range files {
		v.add(f)
	}
	return v
}

func (v *Vault) add(rel string) {
	k := fold(rel)
	if _, ok := v.byKey[k]; ok {
		return // the same name in NFC and NFD: the first one stands
	}
	i := len(v.files)
	v.files = append(v.files, rel)
	v.byKey[k] = i
	base := path.Base(k)
	v.byName[strings.TrimSuffix(base, ".md")] = append(v.byName[strings.TrimSuffix(base, ".md")], i)
	if strings.HasSuffix(base, ".md") {
		// [[T.md]] names T.md as well as [[T]] does.
		v.byName[base] = append(v.byName[base], i)
	}
}

// Resolve returns the vault path a link target written in from resolves
// to, or "" if none: the vault path itself (".md" optional), a path
// relative to from's folder, else a file of that name anywhere (its path
// ending with the target), the one in from's folder first, else the
// shortest path.
func (v *Vault) Resolve(target, from string) string {
	t := strings.TrimSpace(strings.ReplaceAll(target, `\`, "/"))
	if t == "" {
		return ""
	}
	dir := path.Dir(from)
	if strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../") {
		t = path.Join(dir, t)
	}
	t = strings.TrimPrefix(t, "/")
	k := fold(t)
	for _, c := range []string{k + ".md", k} {
		if i, ok := v.byKey[c]; ok {
			return v.files[i]
		}
	}
	if dir != "." {
		for _, c := range []string{fold(path.Join(dir, t)) + ".md", fold(path.Join(dir, t))} {
			if i, ok := v.byKey[c]; ok {
				return v.files[i]
			}
		}
	}
	best := -1
	fdir := fold(dir)
	for _, i := range v.byName[path.Base(k)] {
		fk := fold(v.files[i])
		if !strings.HasSuffix(fk, "/"+k) && !strings.HasSuffix(fk, "/"+k+".md") && fk != k && fk != k+".md" {
			continue
		}
		if best < 0 || better(v.files[i], v.files[best], fdir) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return v.files[best]
}

// better: a file in the linking note's folder, else the shorter path, else
// the first in byte order.
func better(a, b, fdir string) bool {
	ina, inb := fold(path.Dir(a)) == fdir, fold(path.Dir(b)) == fdir
	if ina != inb {
		return ina
	}
	la, lb := utf8.RuneCountInString(a), utf8.RuneCountInString(b)
	if la != lb {
		return la < lb
	}
	return a < b
}

// Note finds the file a user names: a vault path (".md" optional,
// case-insensitive), else a note name resolved as a link from the vault's
// top folder. "" if none.
func (v *Vault) Note(name string) string {
	name = strings.TrimPrefix(filepath.ToSlash(strings.TrimSpace(name)), "./")
	if filepath.IsAbs(name) && v.root != "" {
		if rel, err := filepath.Rel(v.root, filepath.FromSlash(name)); err == nil && !strings.HasPrefix(rel, "..") {
			name = filepath.ToSlash(rel)
		}
	}
	name, _, _ = strings.Cut(name, "#")
	return v.Resolve(name, "")
}

// linking reports whether a file can hold links: a note or a canvas.
func linking(rel string) bool {
	e := strings.ToLower(extOf(rel))
	return e == ".md" || e == ".canvas"
}

// Find returns the links of the note named by note (see [Vault.Note]) in
// the vault at root, both ways. It scans the vault.
func Find(root, note string) (*Result, error) {
	v, err := Scan(root)
	if err != nil {
		return nil, err
	}
	return v.Find(note)
}

// Find is [Find] over v's files.
func (v *Vault) Find(note string) (*Result, error) {
	rel := v.Note(note)
	if rel == "" {
		return nil, fmt.Errorf("find links of %q: %w", note, ErrNoNote)
	}
	res := &Result{Note: rel, Outgoing: []Link{}, Backlinks: []Link{}}
	if linking(rel) {
		data, err := vaultfs.ReadFile(filepath.Join(v.root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, fmt.Errorf("read note: %w", err)
		}
		for _, l := range Extract(rel, data) {
			l.Path = v.Resolve(l.Target, rel)
			res.Outgoing = append(res.Outgoing, l)
		}
	}
	// A file can link to the note only by writing its name (or the
	// name's %20 form): read every note, look closer at those that do.
	base := fold(path.Base(rel))
	base = strings.TrimSuffix(base, ".md")
	needles := [][]byte{[]byte(base)}
	if esc := strings.ReplaceAll(base, " ", "%20"); esc != base {
		needles = append(needles, []byte(esc))
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		work = make(chan string)
	)
	for w := 0; w < max(2, runtime.GOMAXPROCS(0)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				data, err := vaultfs.ReadFile(filepath.Join(v.root, filepath.FromSlash(f)))
				if err != nil {
					continue // gone or unreadable since the scan
				}
				if !strings.HasSuffix(f, ".canvas") && !mentions(data, needles) {
					continue
				}
				var found []Link
				for _, l := range Extract(f, data) {
					if p := v.Resolve(l.Target, f); p == rel {
						l.Path = p
						found = append(found, l)
					}
				}
				if len(found) > 0 {
					mu.Lock()
					res.Backlinks = append(res.Backlinks, found...)
					mu.Unlock()
				}
			}
		}()
	}
	for _, f := range v.files {
		if linking(f) {
			work <- f
		}
	}
	close(work)
	wg.Wait()
	sort.SliceStable(res.Backlinks, func(i, j int) bool {
		a, b := res.Backlinks[i], res.Backlinks[j]
		if a.From != b.From {
			return a.From < b.From
		}
		return a.Line < b.Line
	})
	return res, nil
}

// mentions reports whether a link in data may name one of the folded
// needles: only the text inside [[…]] and after "](" is compared
// (case-insensitively, after NFC), so a note is not folded whole.
func mentions(data []byte, needles [][]byte) bool {
	for _, open := range [][]byte{[]byte("[["), []byte("](")} {
		rest := data
		for {
			i := bytes.Index(rest, open)
			if i < 0 {
				break
			}
			rest = rest[i+2:]
			end := bytes.IndexAny(rest, "]\n")
			if open[0] == ']' {
				end = bytes.IndexAny(rest, ")\n")
			}
			if end < 0 {
				end = len(rest)
			}
			span := rest[:end]
			if !norm.NFC.IsNormal(span) {
				span = norm.NFC.Bytes(span)
			}
			low := bytes.ToLower(span)
			for _, n := range needles {
				if bytes.Contains(low, n) {
					return true
				}
			}
		}
	}
	return false
}
