package links

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"runtime"
	"slices"
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

	// stamps, when not nil, are the linking files' entries as found by
	// the walk of [Find], their keys from the cache or, for a file
	// changed since, unknown (nil) until Find reads it; dirty says the
	// cache must be written back.
	stamps map[string]entry
	dirty  bool
}

// readFile reads a file of the vault (through its root). Overridden by
// tests.
var readFile = vaultfs.ReadFile

// fold is how Obsidian compares names: NFC, case-insensitive.
func fold(s string) string { return strings.ToLower(norm.NFC.String(s)) }

// Scan lists every regular file of the vault at root outside dot-folders
// (those Obsidian hides, .obsidian and .nexus among them); symlinks are
// left out, as the search index leaves them out.
func Scan(root string) (*Vault, error) {
	return scan(root, false)
}

// scan is [Scan]; with stamps, it also stats each note and canvas and
// takes the keys of those unchanged since from the links cache.
func scan(root string, stamps bool) (*Vault, error) {
	v := &Vault{root: root, byKey: map[string]int{}, byName: map[string][]int{}}
	var cache map[string]entry
	if stamps {
		cache = loadCache(root)
		v.stamps = make(map[string]entry, len(cache))
	}
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
		rel = filepath.ToSlash(rel)
		v.add(rel)
		if stamps && linking(rel) {
			info, err := d.Info()
			if err != nil {
				return nil // gone since the folder was read
			}
			e := stamped(info)
			if c, ok := cache[rel]; ok && c.same(e) {
				e.keys = c.keys
				if e.keys == nil {
					e.keys = []string{} // known: no links
				}
			} else {
				v.dirty = true
			}
			v.stamps[rel] = e
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan vault: %w", err)
	}
	if stamps && len(cache) != len(v.stamps) {
		v.dirty = true // files gone (or the cache missing)
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
// the vault at root, both ways. It lists the vault's files and answers
// from the links cache ([CacheFile]), reading only the files changed
// since the cache was written and those whose links name the note; it
// brings the cache up to date (an unwritable one is not an error).
func Find(root, note string) (*Result, error) {
	v, err := scan(root, true)
	if err != nil {
		return nil, err
	}
	res, err := v.Find(note)
	if err != nil {
		return nil, err
	}
	if v.dirty {
		_ = saveCache(root, v.files, v.stamps) // a cache: the answer stands without it
	}
	return res, nil
}

// Find is [Find] over v's files.
func (v *Vault) Find(note string) (*Result, error) {
	rel := v.Note(note)
	if rel == "" {
		return nil, fmt.Errorf("find links of %q: %w", note, ErrNoNote)
	}
	res := &Result{Note: rel, Outgoing: []Link{}, Backlinks: []Link{}}
	if linking(rel) {
		data, err := readFile(filepath.Join(v.root, filepath.FromSlash(rel)))
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
	if v.stamps != nil {
		v.fillKeys()
	}
	key := noteKey(rel)
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
				data, err := readFile(filepath.Join(v.root, filepath.FromSlash(f)))
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
		if !linking(f) {
			continue
		}
		if e, ok := v.stamps[f]; ok && e.keys != nil && !slices.Contains(e.keys, key) {
			continue // no link of f can resolve to the note
		}
		work <- f
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

// fillKeys reads the linking files changed since the cache was written
// (in parallel) and records the keys of their links.
func (v *Vault) fillKeys() {
	var stale []string
	for _, f := range v.files {
		if e, ok := v.stamps[f]; ok && e.keys == nil {
			stale = append(stale, f)
		}
	}
	if len(stale) == 0 {
		return
	}
	keys := make([][]string, len(stale))
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < max(2, runtime.GOMAXPROCS(0)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				data, err := readFile(filepath.Join(v.root, filepath.FromSlash(stale[i])))
				if err != nil {
					continue // unreadable: read again by Find, and next time
				}
				keys[i] = fileKeys(stale[i], data)
				if keys[i] == nil {
					keys[i] = []string{}
				}
			}
		}()
	}
	for i := range stale {
		work <- i
	}
	close(work)
	wg.Wait()
	for i, f := range stale {
		e := v.stamps[f]
		e.keys = keys[i]
		v.stamps[f] = e
	}
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
