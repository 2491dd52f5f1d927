package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/nexus-memory/nexus/internal/atomicfile"
)

// Every file Nexus opens inside a vault is opened through an [os.Root]
// on the vault's folder: a symlink anywhere in the vault may lead to
// another place inside it (a relative link is followed), but one that
// leads outside — to a file, a folder or "/", or swapped in while the
// call runs — makes the open fail with [ErrUnsafePath] instead of reading
// or writing there. The checks are the kernel's, at the moment of the
// open, so there is no window between a check and the open to race.
//
// The helpers below take a path inside the vault, absolute (as
// [Vault.MustPath] and [Vault.Path] return) or vault-relative. The
// package-level ones (ReadFile, Stat, ..., WriteFile, ReplaceIf) find the
// vault by the path itself: a path under the folder of a vault this
// process opened goes through that vault's root; any other path is
// opened as given.

// roots holds the os.Root of every vault folder this process opened, by
// its absolute, symlink-resolved path. A root is a folder handle; it is
// kept for the life of the process, as the folder's vault is.
var roots sync.Map // string -> *os.Root

// rootOf returns the shared root of the vault folder abs, opening it on
// first use.
func rootOf(abs string) (*os.Root, error) {
	if r, ok := roots.Load(abs); ok {
		return r.(*os.Root), nil
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("open vault folder: %w", err)
	}
	if prev, loaded := roots.LoadOrStore(abs, r); loaded {
		r.Close()
		return prev.(*os.Root), nil
	}
	return r, nil
}

// escapeErr is what os.Root answers for a path that leads outside it; the
// standard library does not export it, so it is learnt once.
var escapeErr = sync.OnceValue(func() error {
	r, err := os.OpenRoot(os.TempDir())
	if err != nil {
		return nil
	}
	defer r.Close()
	_, err = r.Stat("..")
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return nil
})

// rootErr names a path a symlink leads out of the vault as [ErrUnsafePath].
func rootErr(op, p string, err error) error {
	if err == nil {
		return nil
	}
	if e := escapeErr(); e != nil && errors.Is(err, e) {
		return fmt.Errorf("%s %s: a symlink leads outside the vault: %w", op, filepath.Base(p), ErrUnsafePath)
	}
	return err
}

// vaultOf returns the root of the vault p lies in, and p relative to it
// (in the OS's form, "." for the folder itself); ok is false for a path
// in no vault this process opened. The nearest vault folder at or above p
// wins.
func vaultOf(p string) (r *os.Root, rel string, ok bool) {
	if !filepath.IsAbs(p) {
		return nil, "", false
	}
	p = filepath.Clean(p)
	for dir := p; ; {
		if v, found := roots.Load(dir); found {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return nil, "", false
			}
			return v.(*os.Root), rel, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, "", false
		}
		dir = parent
	}
}

// inside turns p, absolute inside the vault or vault-relative, into a path
// relative to the vault's folder for its root.
func (v *Vault) inside(p string) (string, error) {
	if !filepath.IsAbs(p) {
		clean, err := CleanRel(p)
		if err != nil {
			return "", err
		}
		p = resolveForm(v.root, clean)
	}
	rel, err := filepath.Rel(v.root, filepath.Clean(p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%q: %w", p, ErrUnsafePath)
	}
	return rel, nil
}

// ReadFile reads a file of the vault through its root.
func (v *Vault) ReadFile(p string) ([]byte, error) {
	rel, err := v.inside(p)
	if err != nil {
		return nil, err
	}
	if b, ok, err := readBeneath(v.fsroot, rel); ok {
		return b, err
	}
	b, err := v.fsroot.ReadFile(rel)
	return b, rootErr("read", p, err)
}

// Open opens a file of the vault for reading through its root.
func (v *Vault) Open(p string) (*os.File, error) {
	return v.OpenFile(p, os.O_RDONLY, 0)
}

// OpenFile is [os.OpenFile] of a file of the vault, through its root.
func (v *Vault) OpenFile(p string, flag int, perm fs.FileMode) (*os.File, error) {
	rel, err := v.inside(p)
	if err != nil {
		return nil, err
	}
	if f, ok := openBeneath(v.fsroot, rel, flag, perm); ok {
		return f, nil
	}
	f, err := v.fsroot.OpenFile(rel, flag, perm)
	return f, rootErr("open", p, err)
}

// Stat is [os.Stat] inside the vault: a symlink leading outside it is an
// error.
func (v *Vault) Stat(p string) (fs.FileInfo, error) {
	rel, err := v.inside(p)
	if err != nil {
		return nil, err
	}
	if st, ok := statBeneath(v.fsroot, rel, false); ok {
		return st, nil
	}
	st, err := v.fsroot.Stat(rel)
	return st, rootErr("stat", p, err)
}

// Lstat is [os.Lstat] inside the vault.
func (v *Vault) Lstat(p string) (fs.FileInfo, error) {
	rel, err := v.inside(p)
	if err != nil {
		return nil, err
	}
	if st, ok := statBeneath(v.fsroot, rel, true); ok {
		return st, nil
	}
	st, err := v.fsroot.Lstat(rel)
	return st, rootErr("stat", p, err)
}

// ReadDir is [os.ReadDir] of a folder of the vault, through its root.
func (v *Vault) ReadDir(p string) ([]os.DirEntry, error) {
	rel, err := v.inside(p)
	if err != nil {
		return nil, err
	}
	return readDirIn(v.fsroot, rel, p)
}

// MkdirAll is [os.MkdirAll] inside the vault.
func (v *Vault) MkdirAll(p string, perm fs.FileMode) error {
	rel, err := v.inside(p)
	if err != nil {
		return err
	}
	return rootErr("create folder", p, v.fsroot.MkdirAll(rel, perm))
}

// Remove is [os.Remove] inside the vault; a symlink is removed, not
// followed.
func (v *Vault) Remove(p string) error {
	rel, err := v.inside(p)
	if err != nil {
		return err
	}
	return rootErr("remove", p, v.fsroot.Remove(rel))
}

// Rename is [os.Rename] of one path of the vault to another.
func (v *Vault) Rename(oldp, newp string) error {
	from, err := v.inside(oldp)
	if err != nil {
		return err
	}
	to, err := v.inside(newp)
	if err != nil {
		return err
	}
	return rootErr("rename", oldp, v.fsroot.Rename(from, to))
}

// WriteFile is the package's [WriteFile] of a file of the vault.
func (v *Vault) WriteFile(p string, data []byte, perm fs.FileMode) error {
	rel, err := v.inside(p)
	if err != nil {
		return err
	}
	return writeIn(v.fsroot, rel, p, data, perm, nil)
}

// ReplaceIf is the package's [ReplaceIf] of a file of the vault.
func (v *Vault) ReplaceIf(p string, old, data []byte, perm fs.FileMode) error {
	rel, err := v.inside(p)
	if err != nil {
		return err
	}
	return writeIn(v.fsroot, rel, p, data, perm, &old)
}

// writeIn creates rel's folder if missing and replaces rel inside r (a
// compare-and-swap against *old when old is not nil).
func writeIn(r *os.Root, rel, shown string, data []byte, perm fs.FileMode, old *[]byte) error {
	if dir := filepath.Dir(rel); dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create folder for %s: %w", filepath.Base(shown), rootErr("create folder", shown, err))
		}
	}
	slash := filepath.ToSlash(rel)
	if old == nil {
		return rootErr("write", shown, atomicfile.WriteFileIn(r, slash, data, perm))
	}
	return rootErr("write", shown, atomicfile.ReplaceIfIn(r, slash, *old, data, perm))
}

func readDirIn(r *os.Root, rel, shown string) ([]os.DirEntry, error) {
	f, err := r.Open(rel)
	if err != nil {
		return nil, rootErr("read folder", shown, err)
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}

// ReadFile is [os.ReadFile], through the root of the vault path lies in.
func ReadFile(path string) ([]byte, error) {
	if r, rel, ok := vaultOf(path); ok {
		if b, ok, err := readBeneath(r, rel); ok {
			return b, err
		}
		b, err := r.ReadFile(rel)
		return b, rootErr("read", path, err)
	}
	return os.ReadFile(path)
}

// OpenFile is [os.OpenFile], through the root of the vault path lies in.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if r, rel, ok := vaultOf(path); ok {
		if f, ok := openBeneath(r, rel, flag, perm); ok {
			return f, nil
		}
		f, err := r.OpenFile(rel, flag, perm)
		return f, rootErr("open", path, err)
	}
	return os.OpenFile(path, flag, perm)
}

// OpenRead is [os.Open], through the root of the vault path lies in.
func OpenRead(path string) (*os.File, error) { return OpenFile(path, os.O_RDONLY, 0) }

// Stat is [os.Stat], through the root of the vault path lies in.
func Stat(path string) (fs.FileInfo, error) {
	if r, rel, ok := vaultOf(path); ok {
		if st, ok := statBeneath(r, rel, false); ok {
			return st, nil
		}
		st, err := r.Stat(rel)
		return st, rootErr("stat", path, err)
	}
	return os.Stat(path)
}

// Lstat is [os.Lstat], through the root of the vault path lies in.
func Lstat(path string) (fs.FileInfo, error) {
	if r, rel, ok := vaultOf(path); ok {
		if st, ok := statBeneath(r, rel, true); ok {
			return st, nil
		}
		st, err := r.Lstat(rel)
		return st, rootErr("stat", path, err)
	}
	return os.Lstat(path)
}

// ReadDir is [os.ReadDir], through the root of the vault path lies in.
func ReadDir(path string) ([]os.DirEntry, error) {
	if r, rel, ok := vaultOf(path); ok {
		return readDirIn(r, rel, path)
	}
	return os.ReadDir(path)
}

// MkdirAll is [os.MkdirAll], through the root of the vault path lies in.
func MkdirAll(path string, perm fs.FileMode) error {
	if r, rel, ok := vaultOf(path); ok {
		return rootErr("create folder", path, r.MkdirAll(rel, perm))
	}
	return os.MkdirAll(path, perm)
}

// Remove is [os.Remove], through the root of the vault path lies in.
func Remove(path string) error {
	if r, rel, ok := vaultOf(path); ok {
		return rootErr("remove", path, r.Remove(rel))
	}
	return os.Remove(path)
}

// RemoveAll is [os.RemoveAll], through the root of the vault path lies
// in: a symlink inside is removed, never what it leads to.
func RemoveAll(path string) error {
	if r, rel, ok := vaultOf(path); ok {
		return rootErr("remove", path, r.RemoveAll(rel))
	}
	return os.RemoveAll(path)
}

// Rename is [os.Rename], through the root of the vault both paths lie in.
func Rename(oldpath, newpath string) error {
	r, from, ok := vaultOf(oldpath)
	r2, to, ok2 := vaultOf(newpath)
	if ok && ok2 && r == r2 {
		return rootErr("rename", oldpath, r.Rename(from, to))
	}
	if ok || ok2 {
		return fmt.Errorf("rename %s: %w", filepath.Base(oldpath), ErrUnsafePath)
	}
	return os.Rename(oldpath, newpath)
}

// Link is [os.Link], through the root of the vault both paths lie in: a
// hard link never made through a symlink that leads out.
func Link(oldpath, newpath string) error {
	r, from, ok := vaultOf(oldpath)
	r2, to, ok2 := vaultOf(newpath)
	if ok && ok2 && r == r2 {
		return rootErr("link", oldpath, r.Link(from, to))
	}
	if ok || ok2 {
		return fmt.Errorf("link %s: %w", filepath.Base(oldpath), ErrUnsafePath)
	}
	return os.Link(oldpath, newpath)
}

// CreateTemp is [os.CreateTemp], through the root of the vault dir lies
// in: the new file's name is pattern with its last "*" replaced by a
// random number, and the file is made 0600, as os.CreateTemp makes it.
func CreateTemp(dir, pattern string) (*os.File, error) {
	r, rel, ok := vaultOf(dir)
	if !ok {
		return os.CreateTemp(dir, pattern)
	}
	prefix, suffix := pattern, ""
	if i := strings.LastIndex(pattern, "*"); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	for range 10000 {
		name := filepath.Join(rel, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		f, err := r.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, rootErr("create temp file in", dir, err)
	}
	return nil, fmt.Errorf("create temp file in %s: %w", dir, fs.ErrExist)
}
