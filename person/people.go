package person

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// Trust states of a public key file, as this machine sees it.
const (
	// Trusted: pinned here, and the file holds the pinned key.
	Trusted = "trusted"
	// Unpinned: a key this machine has never trusted (made elsewhere, or
	// added by whoever can write the vault).
	Unpinned = "not trusted on this machine"
	// Changed: the file holds another key than the one pinned here.
	Changed = "changed since this machine trusted it"
	// Unreadable: the file is not a public key file.
	Unreadable = "unreadable"
)

// PublicKey is one person's public review key as the vault lists it.
type PublicKey struct {
	Name        string            `json:"name"`
	Key         ed25519.PublicKey `json:"key"`
	Fingerprint string            `json:"fingerprint"`
	Created     time.Time         `json:"created"`
	// Path is the vault-relative .pub file.
	Path string `json:"path"`
	// State is one of [Trusted], [Unpinned], [Changed], [Unreadable].
	State string `json:"state"`
	// Error says why the file is unreadable.
	Error string `json:"error,omitempty"`
}

// ParsePublic parses a .pub file's text.
func ParsePublic(data []byte) (PublicKey, error) {
	var p PublicKey
	m, err := parseFields(data, pubHeader)
	if err != nil {
		return p, err
	}
	p.Name = m["name"]
	if err := CheckName(p.Name); err != nil {
		return p, err
	}
	if p.Key, err = field(m, "public", ed25519.PublicKeySize); err != nil {
		return p, err
	}
	p.Fingerprint = Fingerprint(p.Key)
	if c := m["created"]; c != "" {
		t, err := time.Parse(time.RFC3339, c)
		if err != nil {
			return p, fmt.Errorf("created %q is not a time: %w", c, vault.ErrInvalid)
		}
		p.Created = t.UTC()
	}
	return p, nil
}

// People lists the public key files under [PeopleDir], by name, each with
// its trust state on this machine.
func People(v *vault.Vault) ([]PublicKey, error) {
	des, err := os.ReadDir(v.MustPath(PeopleDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", PeopleDir, err)
	}
	pins, err := pinned(v)
	if err != nil {
		return nil, err
	}
	var out []PublicKey
	for _, de := range des {
		stem, ok := strings.CutSuffix(de.Name(), ".pub")
		if !ok || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		rel := PeopleDir + "/" + de.Name()
		var p PublicKey
		var perr error
		if !de.Type().IsRegular() {
			perr = fmt.Errorf("not a regular file: %w", vault.ErrInvalid)
		} else if data, err := os.ReadFile(v.MustPath(rel)); err != nil {
			perr = err
		} else if p, perr = ParsePublic(data); perr == nil && p.Name != stem {
			perr = fmt.Errorf("the file names %q: %w", p.Name, vault.ErrInvalid)
		}
		p.Path = rel
		switch pk, ok := pins[p.Name]; {
		case perr != nil:
			p = PublicKey{Name: stem, Path: rel, State: Unreadable, Error: perr.Error()}
		case !ok:
			p.State = Unpinned
		case !pk.Equal(p.Key):
			p.State = Changed
		default:
			p.State = Trusted
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Trust pins, on this machine, the key that name's public key file holds
// now, and returns it. A person runs it (on a terminal, after comparing
// the fingerprint with the one 'nexus person init' printed on the machine
// that made the key).
func Trust(v *vault.Vault, name string) (PublicKey, error) {
	if err := CheckName(name); err != nil {
		return PublicKey{}, err
	}
	data, err := os.ReadFile(v.MustPath(pubPath(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return PublicKey{}, fmt.Errorf("no public review key %s: %w", pubPath(name), ErrNoKey)
	}
	if err != nil {
		return PublicKey{}, fmt.Errorf("read %s: %w", pubPath(name), err)
	}
	p, err := ParsePublic(data)
	if err != nil {
		return p, fmt.Errorf("%s: %w", pubPath(name), err)
	}
	if p.Name != name {
		return p, fmt.Errorf("%s names %q: %w", pubPath(name), p.Name, vault.ErrInvalid)
	}
	p.Path, p.State = pubPath(name), Trusted
	return p, pin(v, name, p.Key)
}

// pinned reads this machine's pins: name → key.
func pinned(v *vault.Vault) (map[string]ed25519.PublicKey, error) {
	out := map[string]ed25519.PublicKey{}
	des, err := os.ReadDir(v.MustPath(PinsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", PinsDir, err)
	}
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() || CheckName(name) != nil {
			continue
		}
		data, err := os.ReadFile(v.MustPath(pinPath(name)))
		if err != nil {
			continue
		}
		k, err := b64.DecodeString(string(bytes.TrimSpace(data)))
		if err != nil || len(k) != ed25519.PublicKeySize {
			continue
		}
		out[name] = k
	}
	return out, nil
}

// Any reports whether the vault lists any person key, or this machine
// holds or pins one.
func Any(v *vault.Vault) bool {
	for _, d := range []string{PeopleDir, KeysDir, PinsDir} {
		if des, err := os.ReadDir(v.MustPath(d)); err == nil && len(des) > 0 {
			return true
		}
	}
	return false
}
