package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Layout: the fixed folders and files of a vault, relative to its root, in
// slash form.
const (
	NexusDir     = ".nexus"
	ConfigFile   = ".nexus/config.yaml"
	KeysDir      = ".nexus/keys"
	IndexDir     = ".nexus/index"
	StateDir     = ".nexus/state"
	LocksDir     = ".nexus/state/locks"
	AgentsDir    = "agents"
	LiveLogDir   = "log/live"
	DecisionsLog = "log/decisions.md"
	ProjectsDir  = "projects"
	PendingDir   = "review/pending"
	ArchiveDir   = "review/archive"
	CuratorDir   = "review/curator" // the curator's diary, one note per pass
)

// dirs are created by Init, in order: only Nexus's own hidden folder, so
// that init adds nothing to an Obsidian vault's file explorer. The visible
// folders (agents/, log/, projects/, review/) are made by the first write
// into them: [WriteFile] and [ReplaceIf] create a missing parent, and every
// reader takes a missing folder as an empty one.
var dirs = []string{NexusDir, KeysDir, IndexDir, StateDir, LocksDir}

// Vault is an opened vault. It is safe for concurrent use.
type Vault struct {
	root   string                 // absolute, symlinks resolved
	fsroot *os.Root               // on root: every open inside goes through it (root.go)
	config atomic.Pointer[Config] // replaced whole by UpdateConfig, never mutated

	lockWaitFn atomic.Pointer[func(LockWaitNotice)] // see OnLockWait
}

// Open opens the vault rooted at dir, which must hold a .nexus/ folder.
func Open(dir string) (*Vault, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open vault: %w", err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	st, err := os.Stat(filepath.Join(abs, NexusDir))
	if err != nil || !st.IsDir() {
		return nil, fmt.Errorf("open vault %s: %w", abs, ErrNotVault)
	}
	r, err := rootOf(abs)
	if err != nil {
		return nil, err
	}
	if st, err := r.Stat(NexusDir); err != nil || !st.IsDir() { // .nexus/ a link out of the vault
		return nil, fmt.Errorf("open vault %s: %w", abs, errors.Join(ErrNotVault, rootErr("open", NexusDir, err)))
	}
	cfg, err := loadConfig(filepath.Join(abs, filepath.FromSlash(ConfigFile)))
	if err != nil {
		return nil, err
	}
	v := &Vault{root: abs, fsroot: r}
	v.config.Store(&cfg)
	return v, nil
}

// Init makes dir a vault: it creates .nexus/ (keys, index, state) and a
// default .nexus/config.yaml, and returns the vault-relative paths it
// created. The visible folders of the layout are not made here but when
// Nexus first writes into them. It never changes an existing file or
// folder, so running it on an Obsidian vault, or twice, is harmless.
func Init(dir string) (*Vault, []string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("init vault: %w", err)
	}
	// created lists what was made; when .nexus/ itself is new, it stands
	// for everything inside it.
	var created []string
	whole := false
	note := func(rel string) {
		if !whole {
			created = append(created, rel)
		}
	}
	for _, d := range dirs {
		p := filepath.Join(dir, filepath.FromSlash(d))
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		perm := os.FileMode(0o755)
		if d == KeysDir {
			perm = 0o700
		}
		if err := os.Mkdir(p, perm); err != nil {
			return nil, created, fmt.Errorf("init vault: %w", err)
		}
		note(d + "/")
		whole = whole || d == NexusDir
	}
	cfgPath := filepath.Join(dir, filepath.FromSlash(ConfigFile))
	if _, err := os.Lstat(cfgPath); errors.Is(err, fs.ErrNotExist) {
		if err := ReplaceIf(cfgPath, nil, []byte(defaultConfigYAML), 0o644); err != nil && !errors.Is(err, ErrConflict) {
			return nil, created, fmt.Errorf("init vault: write config: %w", err)
		}
		note(ConfigFile)
	}
	v, err := Open(dir)
	return v, created, err
}

// Find returns the vault folder to use: flagDir if not empty, else
// $NEXUS_VAULT, else the nearest folder at or above the working directory
// that holds .nexus/.
func Find(flagDir string) (string, error) {
	if flagDir != "" {
		return flagDir, nil
	}
	if env := os.Getenv("NEXUS_VAULT"); env != "" {
		return env, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find vault: %w", err)
	}
	for dir := wd; ; {
		if st, err := os.Stat(filepath.Join(dir, NexusDir)); err == nil && st.IsDir() {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("find vault from %s: %w", wd, ErrNotVault)
		}
		dir = parent
	}
}

// Root returns the vault's absolute folder.
func (v *Vault) Root() string { return v.root }

// Config returns the configuration loaded when the vault was opened.
func (v *Vault) Config() Config { return *v.config.Load() }

// Path turns a vault-relative slash path into an absolute one. It refuses
// (with [ErrUnsafePath]) empty, absolute and "..” paths, invalid UTF-8, NUL
// bytes, and paths whose existing part resolves through a symlink to outside
// the vault. The path is NFC-normalised, as Obsidian compares paths.
func (v *Vault) Path(rel string) (string, error) {
	clean, err := CleanRel(rel)
	if err != nil {
		return "", err
	}
	abs := resolveForm(v.root, clean)
	// Resolve symlinks on the longest existing prefix.
	probe := abs
	for {
		real, err := filepath.EvalSymlinks(probe)
		if err == nil {
			if !within(v.root, real) {
				return "", fmt.Errorf("%q is a symlink (or under one) that leads out: %w", rel, ErrUnsafePath)
			}
			break
		}
		parent := filepath.Dir(probe)
		if parent == probe || !within(v.root, parent) {
			break
		}
		probe = parent
	}
	return abs, nil
}

// resolveForm joins the NFC path clean to root. Where a segment does not
// exist in that form but exists under another normalisation (macOS and
// sync tools often leave Korean and accented names decomposed, NFD, and
// Linux compares names byte for byte), the name on disk is used, so a note
// listed and indexed as NFC can also be opened and moved.
func resolveForm(root, clean string) string {
	abs := filepath.Join(root, filepath.FromSlash(clean))
	if _, err := os.Lstat(abs); err == nil || isASCII(clean) {
		return abs
	}
	dir := root
	segs := strings.Split(clean, "/")
	for i, seg := range segs {
		next := filepath.Join(dir, seg)
		if _, err := os.Lstat(next); err != nil {
			found := false
			if entries, rerr := os.ReadDir(dir); rerr == nil {
				for _, e := range entries {
					if norm.NFC.String(e.Name()) == seg {
						next, found = filepath.Join(dir, e.Name()), true
						break
					}
				}
			}
			if !found {
				return filepath.Join(append([]string{dir}, segs[i:]...)...)
			}
		}
		dir = next
	}
	return dir
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// MustPath is [Vault.Path] for the fixed, known-good paths Nexus builds
// itself from validated names; it panics on an invalid path (empty,
// absolute, ".."), which would be a bug in Nexus, not bad input. It does
// not resolve symlinks: what is on disk is not Nexus's to vouch for, and a
// link there that leads outside the vault must not stop a command or a
// server. The path is to be opened with this package's helpers (root.go),
// which refuse such a link at the open.
func (v *Vault) MustPath(rel string) string {
	clean, err := CleanRel(rel)
	if err != nil {
		panic(err)
	}
	return resolveForm(v.root, clean)
}

// Rel turns an absolute path inside the vault into a vault-relative slash
// path.
func (v *Vault) Rel(abs string) (string, error) {
	r, err := filepath.Rel(v.root, abs)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%q: %w", abs, ErrUnsafePath)
	}
	return norm.NFC.String(filepath.ToSlash(r)), nil
}

// CleanRel validates and cleans a vault-relative path given by a user or an
// agent, returning it in slash form, NFC-normalised.
func CleanRel(rel string) (string, error) {
	if rel == "" {
		return "", fmt.Errorf("empty path: %w", ErrUnsafePath)
	}
	if !utf8.ValidString(rel) || strings.ContainsRune(rel, 0) {
		return "", fmt.Errorf("path is not valid text: %w", ErrUnsafePath)
	}
	s := strings.ReplaceAll(rel, `\`, "/")
	if strings.HasPrefix(s, "/") || filepath.IsAbs(rel) || filepath.VolumeName(rel) != "" || (len(s) > 1 && s[1] == ':') {
		return "", fmt.Errorf("%q is absolute: %w", rel, ErrUnsafePath)
	}
	for _, seg := range strings.Split(s, "/") {
		if seg == ".." {
			return "", fmt.Errorf("%q climbs out with '..': %w", rel, ErrUnsafePath)
		}
	}
	clean := filepath.ToSlash(filepath.Clean(filepath.FromSlash(s)))
	if clean == "." {
		return "", fmt.Errorf("%q names the vault itself: %w", rel, ErrUnsafePath)
	}
	return norm.NFC.String(clean), nil
}

// Hidden reports whether a vault-relative path has a segment starting with
// "." — the paths Obsidian hides (.obsidian/, .trash/, .nexus/) and Nexus's
// temp files.
func Hidden(rel string) bool {
	for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
		if strings.HasPrefix(seg, ".") && seg != "." {
			return true
		}
	}
	return false
}

func within(root, p string) bool {
	if p == root {
		return true
	}
	r, err := filepath.Rel(root, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}
