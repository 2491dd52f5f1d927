package links

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	vaultfs "github.com/nexus-memory/nexus/vault" // the name vault is a test helper here
)

// CacheFile is the links cache, in the vault's index folder next to the
// search index's manifest: for each note and canvas, its size and
// modification time when it was read and the names its links could
// resolve to (see [linkKeys]). [Find] keeps it current; deleting it costs
// one slow run (every note read), nothing else.
const CacheFile = vaultfs.IndexDir + "/links"

// cacheHeader is the first line of CacheFile; a file with another is
// ignored (and rewritten).
const cacheHeader = "nexus-links 1\n"

// entry is what the cache knows of one linking file.
type entry struct {
	size  int64
	mtime int64 // nanoseconds
	ctime int64 // inode change time, nanoseconds (0 where there is none)
	keys  []string
}

// linkKeys are the folded file names a link to target, written in the
// file from, could resolve to, with and without ".md": every file that
// [Vault.Resolve] can return for it has one of them as its base name
// (Resolve matches by path, by path relative to from's folder, or by base
// name). A note is a candidate for backlinks from a file only when its
// own name (see [noteKey]) is among the keys of the file's links.
func linkKeys(target, from string) []string {
	t := strings.TrimSpace(strings.ReplaceAll(target, `\`, "/"))
	var keys []string
	for _, c := range []string{t, path.Join(path.Dir(from), t), path.Clean(t)} {
		b := fold(path.Base(c))
		keys = append(keys, b)
		if s := strings.TrimSuffix(b, ".md"); s != b {
			keys = append(keys, s)
		}
	}
	return keys
}

// noteKey is the name links to rel are looked up by: its folded base name
// without ".md".
func noteKey(rel string) string {
	return strings.TrimSuffix(fold(path.Base(rel)), ".md")
}

// fileKeys are the keys of all of a file's links, each once.
func fileKeys(rel string, data []byte) []string {
	seen := map[string]bool{}
	var keys []string
	for _, l := range Extract(rel, data) {
		for _, k := range linkKeys(l.Target, rel) {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// loadCache reads CacheFile of the vault at root; an absent or unreadable
// one is empty.
func loadCache(root string) map[string]entry {
	data, err := vaultfs.ReadFile(filepath.Join(root, filepath.FromSlash(CacheFile)))
	if err != nil || !bytes.HasPrefix(data, []byte(cacheHeader)) {
		return map[string]entry{}
	}
	data = data[len(cacheHeader):]
	m := make(map[string]entry, bytes.Count(data, []byte("\n")))
	for len(data) > 0 {
		line := data
		if k := bytes.IndexByte(data, '\n'); k >= 0 {
			line, data = data[:k], data[k+1:]
		} else {
			data = nil
		}
		// size mtime ctime path [key…], tab-separated.
		f := strings.Split(string(line), "\t")
		if len(f) < 4 {
			return map[string]entry{} // damaged: start over
		}
		size, err1 := strconv.ParseInt(f[0], 10, 64)
		mtime, err2 := strconv.ParseInt(f[1], 10, 64)
		ctime, err3 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return map[string]entry{}
		}
		fields := f[3:]
		for i, s := range fields {
			if strings.HasPrefix(s, `"`) {
				u, err := strconv.Unquote(s)
				if err != nil {
					return map[string]entry{}
				}
				fields[i] = u
			}
		}
		m[fields[0]] = entry{size: size, mtime: mtime, ctime: ctime, keys: fields[1:]}
	}
	return m
}

// cacheField is s as a field of a cache line: quoted when it holds a tab,
// a line break, a quote or a backslash (or starts like a quoted one).
func cacheField(s string) string {
	if strings.ContainsAny(s, "\t\n\r\"\\") {
		return strconv.Quote(s)
	}
	return s
}

// saveCache writes the entries of the files listed in order, atomically.
// Two processes may write it at once: each writes a whole, correct cache.
func saveCache(root string, files []string, m map[string]entry) error {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	w.WriteString(cacheHeader)
	for _, f := range files {
		e, ok := m[f]
		if !ok || e.keys == nil {
			continue // not a linking file, or unread: read next time
		}
		fmt.Fprintf(w, "%d\t%d\t%d\t%s", e.size, e.mtime, e.ctime, cacheField(f))
		for _, k := range e.keys {
			w.WriteString("\t" + cacheField(k))
		}
		w.WriteByte('\n')
	}
	w.Flush()
	return vaultfs.WriteFile(filepath.Join(root, filepath.FromSlash(CacheFile)), b.Bytes(), 0o644)
}

// stamped is the entry of a file as it is now, its keys not yet known:
// size, modification and change time, the search index's freshness rule
// (docs/search.md).
func stamped(info fs.FileInfo) entry {
	return entry{size: info.Size(), mtime: info.ModTime().UnixNano(), ctime: ctimeOf(info)}
}

// same reports whether a and b stamp the same file content.
func (a entry) same(b entry) bool {
	return a.size == b.size && a.mtime == b.mtime && a.ctime == b.ctime
}
