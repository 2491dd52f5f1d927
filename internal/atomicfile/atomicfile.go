// Package atomicfile replaces files so that a reader, or a process killed
// mid-write, sees either the old bytes or the new bytes, never a mix.
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// createTemp is overridden by tests to inject faults.
var createTemp = os.CreateTemp

// WriteFile atomically replaces path with data: a temporary file in the same
// folder (named with a leading dot so Obsidian ignores it) is written,
// fsynced, closed and renamed over path, and the folder is fsynced so the
// rename itself is durable. On an error before the rename the temporary
// file is removed and path is untouched; an error after it (the folder's
// fsync) is a [*DurabilityError]: path holds data (see [Written]).
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	dir, base := splitPath(path)
	return replace(dir, base, data, perm, nil)
}

// ReplaceIf is [WriteFile] with a compare-and-swap: path must still hold
// exactly old (old == nil: path must not exist yet), or nothing is written
// and the error is [ErrConflict]; the caller re-reads and starts over.
//
// The comparison is the last step before the rename: the new bytes are
// written and fsynced first, then path is opened and compared, then
// renamed over. The handle of the compared file stays open across the
// rename, so a save that lands in it after the comparison — a person's
// editor saving in place, truncate then write, as Obsidian does — is seen
// after the rename (ReplaceIf looks right after it, while the fsyncs run,
// after them, and on Linux waits while anyone holds the replaced file open
// for writing): ReplaceIf waits for that save to finish, puts its
// bytes back in path (a compare-and-swap against the bytes it had just
// written) and returns [ErrConflict], so the caller starts over from the
// person's bytes and the save is not lost. Should the file change yet again
// meanwhile, the save is kept beside it as "NAME (Nexus conflicted copy
// TIME).EXT", which doctor and the conflict handling report like a sync
// tool's conflict copy. A new file (old == nil) is linked into place, which
// fails if a file appeared meanwhile. What is left is a file *replaced* by
// another program's own rename between the comparison and ours (editors
// that save through a temp file): the two renames are microseconds apart;
// see docs/vault.md. Windows cannot rename over a file that is open, so
// there the handle is closed before the rename and the window is the time
// between the comparison and the rename.
//
// Nexus processes that share a file also hold a lock, which closes the
// window among them; the comparison is there for people and their
// editors, who take no lock.
//
// As with [WriteFile], an error once data is in place is a
// [*DurabilityError]: the swap is done, do not start over.
func ReplaceIf(path string, old, data []byte, perm fs.FileMode) error {
	dir, base := splitPath(path)
	return replace(dir, base, data, perm, &swap{old: old})
}

// splitPath is path's folder and name.
func splitPath(path string) (osFolder, string) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	return osFolder(dir), base
}

// swap is the expectation of a compare-and-swap: the bytes path holds.
// late puts the fsync after the rename (see putBack).
type swap struct {
	old  []byte
	late bool
}

// Test hooks: testHookBeforeRename runs between the comparison and the
// rename of a compare-and-swap, testHookAfterRename right after it.
var testHookBeforeRename, testHookAfterRename func(path string)

func replace(dir folder, base string, data []byte, perm fs.FileMode, cas *swap) (err error) {
	sweepStaleIn(dir) // temp files of writers killed here before (cleanup.go)
	f, tmp, err := dir.createTemp("." + base + ".tmp-*")
	if err != nil {
		return fmt.Errorf("create temp file for %s: %w", base, err)
	}
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				f.Close()
			}
			dir.remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", base, err)
	}
	if cas == nil || !cas.late {
		if err = f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", base, err)
		}
	}
	if runtime.GOOS != "windows" {
		if err = f.Chmod(perm); err != nil {
			return fmt.Errorf("chmod %s: %w", base, err)
		}
	}
	// Close, then rename: Windows refuses to rename an open file.
	closed = true
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", base, err)
	}
	switch {
	case cas == nil:
		if err = dir.rename(tmp, base); err != nil {
			return fmt.Errorf("rename into %s: %w", base, err)
		}
		return afterRename(dir.path(base), dir.syncDir())
	case cas.old == nil:
		return createNew(dir, tmp, base)
	}
	return swapIn(dir, tmp, base, data, perm, cas)
}

// createNew puts tmp in place at path only if path does not exist. A hard
// link fails when a file of that name appeared, so no window is left; file
// systems without hard links fall back to checking, then renaming.
func createNew(dir folder, tmp, base string) error {
	path := dir.path(base)
	if runtime.GOOS != "windows" {
		err := dir.link(tmp, base)
		if err == nil {
			dir.remove(tmp)
			return afterRename(path, dir.syncDir())
		}
		if errors.Is(err, fs.ErrExist) {
			return ErrConflict
		}
	}
	if _, err := dir.lstat(base); err == nil {
		return ErrConflict
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("re-read %s: %w", base, err)
	}
	if testHookBeforeRename != nil {
		testHookBeforeRename(path)
	}
	if err := dir.rename(tmp, base); err != nil {
		return fmt.Errorf("rename into %s: %w", base, err)
	}
	return afterRename(path, dir.syncDir())
}

// swapIn renames tmp (holding data) over path if path holds cas.old, and
// afterwards makes sure no save landed in the replaced file meanwhile.
func swapIn(dir folder, tmp, base string, data []byte, perm fs.FileMode, cas *swap) error {
	path := dir.path(base)
	h, err := dir.open(base)
	if errors.Is(err, fs.ErrNotExist) {
		return ErrConflict
	}
	if err != nil {
		return fmt.Errorf("re-read %s: %w", base, err)
	}
	defer h.Close()
	cur, err := io.ReadAll(h)
	if err != nil {
		return fmt.Errorf("re-read %s: %w", base, err)
	}
	if !bytes.Equal(cur, cas.old) {
		return ErrConflict
	}
	if runtime.GOOS == "windows" {
		h.Close() // Windows cannot rename over an open file
	} else if hs, err := h.Stat(); err == nil {
		// Another program's rename since we opened it: that is new bytes.
		if ps, err := dir.lstat(base); err != nil || !os.SameFile(hs, ps) {
			return ErrConflict
		}
	}
	if testHookBeforeRename != nil {
		testHookBeforeRename(path)
	}
	if err := dir.rename(tmp, base); err != nil {
		return fmt.Errorf("rename into %s: %w", base, err)
	}
	if testHookAfterRename != nil {
		testHookAfterRename(path)
	}
	if runtime.GOOS == "windows" {
		return afterRename(path, syncSwapped(dir, base, cas.late))
	}
	// Before anything slow (the fsyncs): until a displaced save is put
	// back, readers see ours.
	if lost, changed := savedMeanwhile(h, cas.old); changed {
		err := putBack(dir, base, h, data, lost, perm)
		dir.syncDir()
		return err
	}
	// An editor's open that found the old file just before our rename may
	// truncate and write it a moment after it (the kernel looks the name
	// up, then truncates). The fsyncs take milliseconds, and far longer on
	// a busy disk, so the replaced file is watched while they run: a save
	// that lands in it is put back at once, not when the disk is done.
	synced := make(chan error, 1)
	go func() { synced <- syncSwapped(dir, base, cas.late) }()
	for wait := watchPollMin; ; wait = min(2*wait, watchPollMax) {
		select {
		case err := <-synced:
			// Once more, after the fsyncs, and then for as long as an
			// editor holds the replaced file open for writing: its open
			// counted as a writer before it truncates, and the truncate
			// can wait many milliseconds on a busy disk's journal.
			lost, changed := savedMeanwhile(h, cas.old)
			if !changed && awaitWriters(h) {
				lost, changed = savedMeanwhile(h, cas.old)
			}
			if changed {
				return putBack(dir, base, h, data, lost, perm)
			}
			return afterRename(path, err)
		case <-time.After(wait):
			if lost, changed := savedMeanwhile(h, cas.old); changed {
				err := putBack(dir, base, h, data, lost, perm)
				<-synced
				return err
			}
		}
	}
}

// Watching the replaced file while the fsyncs after a swap run: the first
// look after watchPollMin, then twice as long each time, up to
// watchPollMax.
const (
	watchPollMin = 100 * time.Microsecond
	watchPollMax = 2 * time.Millisecond
)

// writersMax bounds the wait for a writer of the replaced file.
const writersMax = 2 * time.Second

// awaitWriters waits, up to writersMax, until no process holds h's file
// open for writing, and reports whether one did.
func awaitWriters(h *os.File) bool {
	if !openForWriting(h) {
		return false
	}
	for start, wait := time.Now(), watchPollMin; time.Since(start) < writersMax && openForWriting(h); wait = min(2*wait, watchPollMax) {
		time.Sleep(wait)
	}
	return true
}

// testHookSyncSwapped runs at the start of syncSwapped.
var testHookSyncSwapped func(path string)

// syncSwapped makes a swap durable: path's bytes, when late (see putBack),
// then the folder's entry.
func syncSwapped(dir folder, base string, late bool) error {
	if testHookSyncSwapped != nil {
		testHookSyncSwapped(dir.path(base))
	}
	if late {
		if g, err := dir.open(base); err == nil {
			g.Sync()
			g.Close()
		}
	}
	return dir.syncDir()
}

// Waiting for an in-place save that landed in the replaced file: an
// editor truncates, then writes.
const (
	emptyPollFast = 50 * time.Microsecond // the first emptyFast: most writes follow at once
	emptyFast     = 20 * time.Millisecond
	emptyPoll     = 2 * time.Millisecond
	emptyMax      = time.Second // a truncated file still empty this long is the save
)

// savedMeanwhile reports whether the replaced file h (read as old before
// the rename) was written since, and then its bytes. It returns at once
// when the file holds bytes; an empty file is watched for up to emptyMax
// for the write that follows a truncate.
func savedMeanwhile(h *os.File, old []byte) ([]byte, bool) {
	cur, ok := readAt0(h)
	if !ok || bytes.Equal(cur, old) {
		return nil, false
	}
	for start := time.Now(); len(cur) == 0 && time.Since(start) < emptyMax; {
		if time.Since(start) < emptyFast {
			time.Sleep(emptyPollFast)
		} else {
			time.Sleep(emptyPoll)
		}
		if cur, ok = readAt0(h); !ok {
			break
		}
	}
	return cur, !bytes.Equal(cur, old)
}

func readAt0(h *os.File) ([]byte, bool) {
	b, err := io.ReadAll(io.NewSectionReader(h, 0, 1<<62))
	return b, err == nil
}

// putBack puts a save that our rename displaced (lost, read from the
// replaced file h) back into path, if path still holds ours, and returns
// ErrConflict so the caller starts over from it. Time counts here: until
// the save is back, a reader sees ours, so the fsync comes after the
// rename (the editor never fsynced those bytes either). A save still being
// written into h is followed: put back again until h stops changing. If
// path changed again meanwhile, the save is kept as a conflict copy beside
// it.
func putBack(dir folder, base string, h *os.File, ours, lost []byte, perm fs.FileMode) error {
	for round := 0; ; round++ {
		err := replace(dir, base, lost, perm, &swap{old: ours, late: true})
		if Written(err) {
			err = nil // the save is back in place; its folder's fsync is not ours to report
		}
		if err != nil && !(errors.Is(err, ErrConflict) && bytes.Equal(readOrNil(dir, base), lost)) {
			if !errors.Is(err, ErrConflict) {
				return fmt.Errorf("%w; a save made meanwhile could not be put back: %v", ErrConflict, err)
			}
			aside := ConflictCopyName(base, time.Now())
			if cerr := replace(dir, aside, lost, perm, &swap{}); !Written(cerr) {
				return fmt.Errorf("%w; a save made meanwhile could not be kept in %s: %v", ErrConflict, filepath.Base(aside), cerr)
			}
			return fmt.Errorf("%w; a save made meanwhile is kept in %s", ErrConflict, filepath.Base(aside))
		}
		again, ok := readAt0(h)
		if !ok || bytes.Equal(again, lost) || round >= 10 {
			return ErrConflict
		}
		ours, lost = lost, again
	}
}

func readOrNil(dir folder, base string) []byte {
	b, _ := dir.readFile(base)
	return b
}

// ConflictCopyName is where [ReplaceIf] keeps a person's save it could
// not put back: "NAME (Nexus conflicted copy 2026-12-01 101500).EXT" beside
// path, a name the conflict-copy checks recognise (Dropbox style).
func ConflictCopyName(path string, now time.Time) string {
	dir, base := filepath.Split(path)
	ext := filepath.Ext(base)
	return filepath.Join(dir, strings.TrimSuffix(base, ext)+" (Nexus conflicted copy "+now.UTC().Format("2006-01-02 150405.000")+")"+ext)
}
