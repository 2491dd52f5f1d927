// Package atomicfile replaces files so that a reader, or a process killed
// mid-write, sees either the old bytes or the new bytes, never a mix.
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// ErrConflict is returned by [ReplaceIf] when the file no longer holds the
// bytes the caller read: someone (a person in an editor, another process)
// saved it in between. The caller should re-read and start over.
var ErrConflict = errors.New("file changed on disk while it was being updated")

// createTemp is overridden by tests to inject faults.
var createTemp = os.CreateTemp

// WriteFile atomically replaces path with data: a temporary file in the same
// folder (named with a leading dot so Obsidian ignores it) is written,
// fsynced, closed and renamed over path, and the folder is fsynced so the
// rename itself is durable. On any error the temporary file is removed and
// path is untouched.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return replace(path, data, perm, func() error { return nil })
}

// ReplaceIf is [WriteFile] with a compare-and-swap: just before the rename it
// checks that path still holds exactly old; old == nil means path must not
// exist yet. If not, nothing is written and the error is [ErrConflict].
//
// The check and the rename are two steps, so a save landing in the
// microseconds between them can still be overwritten; Nexus processes that
// share a file also hold a lock, which closes the window among them. The
// check is there for people and their editors, who take no lock.
func ReplaceIf(path string, old, data []byte, perm fs.FileMode) error {
	return replace(path, data, perm, func() error {
		cur, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if old == nil {
				return nil
			}
			return ErrConflict
		case err != nil:
			return fmt.Errorf("re-read %s: %w", filepath.Base(path), err)
		case old == nil || !bytes.Equal(cur, old):
			return ErrConflict
		}
		return nil
	})
}

func replace(path string, data []byte, perm fs.FileMode, check func() error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	SweepStale(dir) // temp files of writers killed here before (cleanup.go)
	f, err := createTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temp file for %s: %w", base, err)
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				f.Close()
			}
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", base, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", base, err)
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
	if err = check(); err != nil {
		return err
	}
	if err = rename(tmp, path); err != nil {
		return fmt.Errorf("rename into %s: %w", base, err)
	}
	return SyncDir(dir)
}
