package livelog

import (
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/vault"
)

// dirEnt is one name in a cached folder listing.
type dirEnt struct {
	name    string // as on disk
	nfc     string // name in NFC (macOS may store NFD)
	regular bool
	dir     bool
}

// dirListing is a folder's listing as read at one time, with what a stat
// of the folder said just before.
type dirListing struct {
	ino   uint64
	mtime time.Time
	ents  []dirEnt
}

// safeAge is how old a folder's modification time must be, when it is
// listed, for the listing to be kept: a file added to or removed from a
// folder later sets its time to the clock of that moment, which differs
// from the time kept only if the clock has moved on by more than the file
// system's timestamp granularity. Times with sub-millisecond digits come
// from a file system that keeps them (ext4, APFS, NTFS: the clock's tick,
// at most 10 ms); others may keep whole seconds (FAT's two).
func safeAge(mtime time.Time) time.Duration {
	if mtime.Nanosecond()%int(time.Millisecond) != 0 {
		return 100 * time.Millisecond
	}
	return 3 * time.Second
}

// readDir lists the folder rel, reusing this process's earlier listing
// when a stat says the folder is unchanged: the same inode and the same
// modification time, which was already safely old ([safeAge]) when that
// listing was read. Appends list the live log's two folders every time,
// and in a long-lived process (an MCP server, a watch, an agent's helper)
// they rarely change; a stat is a fifth of a listing's cost. The listing
// returned is shared: callers must not change it.
func (l *Log) readDir(rel string) ([]dirEnt, error) {
	path := l.abs(rel)
	before := time.Now()
	st, err := vault.Stat(path)
	if err != nil {
		return nil, err
	}
	ino, mtime := fileID(st), st.ModTime()
	l.dirMu.Lock()
	c, ok := l.dirs[rel]
	l.dirMu.Unlock()
	if ok && c.ino == ino && c.mtime.Equal(mtime) {
		return c.ents, nil
	}
	des, err := vault.ReadDir(path)
	if err != nil {
		return nil, err
	}
	ents := make([]dirEnt, len(des))
	for i, de := range des {
		ents[i] = dirEnt{name: de.Name(), nfc: norm.NFC.String(de.Name()), regular: de.Type().IsRegular(), dir: de.IsDir()}
	}
	l.dirMu.Lock()
	if l.dirs == nil {
		l.dirs = map[string]dirListing{}
	}
	if before.Sub(mtime) > safeAge(mtime) {
		l.dirs[rel] = dirListing{ino: ino, mtime: mtime, ents: ents}
	} else {
		delete(l.dirs, rel)
	}
	l.dirMu.Unlock()
	return ents, nil
}
