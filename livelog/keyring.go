package livelog

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

// idStamp is what a stat says of one agent's IDENTITY.md: a changed
// file (edited in place, or replaced) has another size, time or inode.
type idStamp struct {
	name  string
	ino   uint64
	size  int64
	mtime time.Time
}

// identityStamps stats every agent's IDENTITY.md, in name order.
func (l *Log) identityStamps() ([]idStamp, error) {
	des, err := vault.ReadDir(l.abs(vault.AgentsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []idStamp
	for _, de := range des {
		if !de.IsDir() || identity.ValidName(de.Name()) != nil {
			continue
		}
		st, err := vault.Stat(filepath.Join(l.root, filepath.FromSlash(identity.IdentityPath(de.Name()))))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		out = append(out, idStamp{name: de.Name(), ino: fileID(st), size: st.Size(), mtime: st.ModTime()})
	}
	return out, nil
}

// keyring returns every agent's public keys, loaded again only when an
// IDENTITY.md changed since the last load (a stat per agent instead of
// parsing every identity on every append). A key added, removed or
// replaced changes the file, so the keys used are those the files list.
func (l *Log) keyring() (identity.Keyring, error) {
	kr, _, err := l.keysAndRotations()
	return kr, err
}

// keysAndRotations is [Log.keyring] with the agents' valid key rotations
// (see [identity.Rotation]), loaded and cached together.
func (l *Log) keysAndRotations() (identity.Keyring, map[string][]identity.Rotation, error) {
	stamps, err := l.identityStamps()
	if err != nil {
		return loadKeysAndRotations(l.v)
	}
	l.krMu.Lock()
	if l.kr != nil && slices.Equal(stamps, l.krStamps) {
		kr, rots := l.kr, l.rots
		l.krMu.Unlock()
		return kr, rots, nil
	}
	l.krMu.Unlock()
	kr, rots, err := loadKeysAndRotations(l.v)
	if err != nil {
		return nil, nil, err
	}
	l.krMu.Lock()
	l.kr, l.rots, l.krStamps = kr, rots, stamps
	l.krMu.Unlock()
	return kr, rots, nil
}

func loadKeysAndRotations(v *vault.Vault) (identity.Keyring, map[string][]identity.Rotation, error) {
	kr, err := identity.LoadKeyring(v)
	if err != nil {
		return nil, nil, err
	}
	rots, err := identity.LoadRotations(v)
	if err != nil {
		return nil, nil, err
	}
	return kr, rots, nil
}
