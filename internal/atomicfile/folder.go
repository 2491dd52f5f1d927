package atomicfile

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// folder is where a replacement happens: the folder of the file, whose
// entries are named by their bare names. osFolder reaches it by path, as
// WriteFile and ReplaceIf do; rootFolder through an [os.Root] opened on it,
// as WriteFileIn and ReplaceIfIn do, so that no symlink on the way, nor one
// swapped in while the write runs, leads the write outside the root.
type folder interface {
	createTemp(pattern string) (f *os.File, name string, err error)
	open(name string) (*os.File, error)
	lstat(name string) (fs.FileInfo, error)
	rename(oldname, newname string) error
	link(oldname, newname string) error
	remove(name string) error
	readFile(name string) ([]byte, error)
	syncDir() error
	// path is name's path as the caller knows it, for errors and hooks.
	path(name string) string
}

// osFolder is a folder reached by its path.
type osFolder string

func (d osFolder) join(name string) string { return filepath.Join(string(d), name) }

func (d osFolder) createTemp(pattern string) (*os.File, string, error) {
	f, err := createTemp(string(d), pattern)
	if err != nil {
		return nil, "", err
	}
	return f, filepath.Base(f.Name()), nil
}

func (d osFolder) open(name string) (*os.File, error)     { return os.Open(d.join(name)) }
func (d osFolder) lstat(name string) (fs.FileInfo, error) { return os.Lstat(d.join(name)) }
func (d osFolder) rename(oldname, newname string) error {
	return rename(d.join(oldname), d.join(newname))
}
func (d osFolder) link(oldname, newname string) error {
	return os.Link(d.join(oldname), d.join(newname))
}
func (d osFolder) remove(name string) error             { return os.Remove(d.join(name)) }
func (d osFolder) readFile(name string) ([]byte, error) { return os.ReadFile(d.join(name)) }
func (d osFolder) syncDir() error                       { return SyncDir(string(d)) }
func (d osFolder) path(name string) string              { return d.join(name) }

// rootFolder is a folder reached through an [os.Root] opened on it; shown
// is its path for messages.
type rootFolder struct {
	r     *os.Root
	shown string
}

func (d rootFolder) createTemp(pattern string) (*os.File, string, error) {
	prefix, suffix, _ := strings.Cut(pattern, "*")
	for range 10000 {
		var b [8]byte
		rand.Read(b[:])
		name := prefix + strconv.FormatUint(uint64(binary.LittleEndian.Uint32(b[:])), 10) + suffix
		f, err := d.r.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		return f, name, nil
	}
	return nil, "", fmt.Errorf("create temp file in %s: %w", d.shown, fs.ErrExist)
}

func (d rootFolder) open(name string) (*os.File, error)     { return d.r.Open(name) }
func (d rootFolder) lstat(name string) (fs.FileInfo, error) { return d.r.Lstat(name) }
func (d rootFolder) rename(oldname, newname string) error   { return d.r.Rename(oldname, newname) }
func (d rootFolder) link(oldname, newname string) error     { return d.r.Link(oldname, newname) }
func (d rootFolder) remove(name string) error               { return d.r.Remove(name) }
func (d rootFolder) readFile(name string) ([]byte, error)   { return d.r.ReadFile(name) }
func (d rootFolder) path(name string) string                { return filepath.Join(d.shown, name) }

func (d rootFolder) syncDir() error {
	f, err := d.r.Open(".")
	if err != nil {
		return fmt.Errorf("open folder for sync: %w", err)
	}
	defer f.Close()
	return syncOpenDir(f, d.shown)
}

// inRoot opens the folder of name (a slash path relative to r) through r.
func inRoot(r *os.Root, name string) (rootFolder, string, error) {
	dir, base := path.Split(path.Clean(name))
	if base == "" || base == "." || base == ".." {
		return rootFolder{}, "", fmt.Errorf("replace %q: not a file name", name)
	}
	if dir == "" {
		dir = "."
	}
	dr, err := r.OpenRoot(dir)
	if err != nil {
		return rootFolder{}, "", fmt.Errorf("open folder of %s: %w", base, err)
	}
	return rootFolder{r: dr, shown: filepath.Join(r.Name(), filepath.FromSlash(dir))}, base, nil
}

// WriteFileIn is [WriteFile] for name, a slash path inside r: the folder
// is opened through r and the file replaced inside it, so a symlink
// anywhere on the way that leads outside r, even one swapped in during the
// call, makes it fail instead of writing outside. A symlink at name itself
// is replaced by the file, not followed.
func WriteFileIn(r *os.Root, name string, data []byte, perm fs.FileMode) error {
	d, base, err := inRoot(r, name)
	if err != nil {
		return err
	}
	defer d.r.Close()
	return replace(d, base, data, perm, nil)
}

// ReplaceIfIn is [ReplaceIf] for name, a slash path inside r, confined to
// r as [WriteFileIn] is. A symlink at name that leads outside r cannot be
// compared and is an error.
func ReplaceIfIn(r *os.Root, name string, old, data []byte, perm fs.FileMode) error {
	d, base, err := inRoot(r, name)
	if err != nil {
		return err
	}
	defer d.r.Close()
	return replace(d, base, data, perm, &swap{old: old})
}
