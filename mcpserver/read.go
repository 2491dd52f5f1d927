package mcpserver

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/nexus-memory/nexus/vault"
)

// maxNoteBytes bounds a note read by memory_get or as a resource.
const maxNoteBytes = 8 << 20

// readNote reads a markdown note by vault-relative path, refusing anything
// that is not a .md file inside the vault and outside every dot-folder
// (.nexus/ holds the private keys), also through symlinks. It is read as
// other agents may see it: quarantined log entries show their notice
// (livelog's Shown), and a paragraph failing the security scan is withheld
// (shownNote).
func (s *Server) readNote(rel string) (clean string, data []byte, err error) {
	clean, f, size, err := s.openNote(rel)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	if size > maxNoteBytes {
		return "", nil, fmt.Errorf("%q is %d bytes, more than the %d a whole read returns; read a line range with memory_get (from, lines): %w", clean, size, maxNoteBytes, vault.ErrRefused)
	}
	data, err = io.ReadAll(io.LimitReader(f, maxNoteBytes+1))
	if err != nil {
		return "", nil, fmt.Errorf("read %q: %w", clean, err)
	}
	// Quarantined log entries show their notice; then the scan of what
	// is returned (withhold.go).
	data = s.lg.Shown(clean, data, 1)
	return clean, []byte(shownNote(clean, strings.ReplaceAll(string(data), "\r\n", "\n"))), nil
}

// openNote opens a markdown note by vault-relative path, with the checks
// of [Server.readNote], and returns it with its size.
func (s *Server) openNote(rel string) (clean string, f *os.File, size int64, err error) {
	clean, err = vault.CleanRel(rel)
	if err != nil {
		return "", nil, 0, err
	}
	if vault.Hidden(clean) {
		return "", nil, 0, fmt.Errorf("%q is in a hidden folder (.nexus/ holds keys and state): %w", rel, vault.ErrUnsafePath)
	}
	if !strings.EqualFold(path.Ext(clean), ".md") {
		return "", nil, 0, fmt.Errorf("%q is not a markdown note; only .md files in the vault can be read: %w", rel, vault.ErrUnsafePath)
	}
	abs, err := s.v.Path(clean)
	if err != nil {
		return "", nil, 0, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, 0, fmt.Errorf("note %q: %w", clean, vault.ErrNotFound)
	}
	if err != nil {
		return "", nil, 0, fmt.Errorf("read %q: %w", clean, err)
	}
	realRel, err := s.v.Rel(real)
	if err != nil || vault.Hidden(realRel) || !strings.EqualFold(path.Ext(realRel), ".md") {
		return "", nil, 0, fmt.Errorf("%q links to a file that cannot be read: %w", rel, vault.ErrUnsafePath)
	}
	f, err = vault.OpenRead(real)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil, 0, fmt.Errorf("note %q: %w", clean, vault.ErrNotFound)
		}
		return "", nil, 0, fmt.Errorf("read %q: %w", clean, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return "", nil, 0, fmt.Errorf("read %q: %w", clean, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return "", nil, 0, fmt.Errorf("%q is not a file: %w", clean, vault.ErrInvalid)
	}
	return clean, f, st.Size(), nil
}
