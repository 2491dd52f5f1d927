package identity

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// DeviceKey is one device's public key of an agent, written in
// IDENTITY.md's frontmatter as a list item "DEVICE ed25519:BASE64":
//
//	device_keys:
//	    - vps ed25519:kq3...
//	    - laptop ed25519:Zt1...
//
// Each machine keeps its own private key in .nexus/keys/ (never synced),
// so an agent that writes from two machines has two keys.
type DeviceKey struct {
	Device string
	Key    ed25519.PublicKey
}

// String renders the key as it appears in IDENTITY.md.
func (dk DeviceKey) String() string { return dk.Device + " " + EncodePublicKey(dk.Key) }

// ParseDeviceKey parses "DEVICE ed25519:BASE64".
func ParseDeviceKey(s string) (DeviceKey, error) {
	dev, key, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok || vault.CheckDeviceName(dev) != nil {
		return DeviceKey{}, fmt.Errorf("device key %q: want DEVICE ed25519:BASE64: %w", s, ErrKey)
	}
	pub, err := DecodePublicKey(key)
	if err != nil {
		return DeviceKey{}, err
	}
	return DeviceKey{Device: dev, Key: pub}, nil
}

// Keys returns every public key of the agent: its device keys and the
// first key (public_key), without repeats.
func (id *Identity) Keys() []DeviceKey {
	var out []DeviceKey
	seen := map[string]bool{}
	for _, dk := range id.DeviceKeys {
		if !seen[string(dk.Key)+dk.Device] {
			seen[string(dk.Key)+dk.Device] = true
			out = append(out, dk)
		}
	}
	if len(id.PublicKey) == ed25519.PublicKeySize {
		known := false
		for _, dk := range out {
			known = known || bytes.Equal(dk.Key, id.PublicKey)
		}
		if !known {
			out = append(out, DeviceKey{Key: id.PublicKey})
		}
	}
	return out
}

// Has reports whether pub is one of the agent's keys.
func (id *Identity) Has(pub ed25519.PublicKey) bool {
	for _, dk := range id.Keys() {
		if bytes.Equal(dk.Key, pub) {
			return true
		}
	}
	return false
}

// SignerFor returns agent's signer on this machine, ready to sign as
// agent@device: the private key in .nexus/keys/AGENT.key (created if this
// machine has none yet: keys never travel between machines; but a key
// file gone while IDENTITY.md lists a key for device is [ErrKeyMissing],
// never silently a new key), with its
// public key listed under device in the agent's IDENTITY.md (added with
// compare-and-swap if missing, so a person's concurrent edit is kept).
// The agent must exist (its IDENTITY.md, synced from another machine, is
// enough).
func SignerFor(v *vault.Vault, agent, device string) (*Signer, error) {
	if err := ValidName(agent); err != nil {
		return nil, err
	}
	if err := vault.CheckDeviceName(device); err != nil {
		return nil, err
	}
	unlock, err := v.Lock("identity-" + agent)
	if err != nil {
		return nil, err
	}
	defer unlock()
	path := v.MustPath(IdentityPath(agent))
	if _, err := vault.Stat(path); err != nil {
		return nil, fmt.Errorf("agent %q: %w", agent, ErrNoAgent)
	}
	if _, err := vault.Lstat(v.MustPath(KeyPath(agent))); errors.Is(err, fs.ErrNotExist) {
		if id, _ := Load(v, agent); id != nil && listsDevice(id, device) {
			return nil, fmt.Errorf("agent %s: %s is missing, but IDENTITY.md lists a key of device %s: restore the key file from a backup, or make a new key for this device on purpose with 'nexus agent new-key %s' (if this is another machine than the one that made that key, give it a name of its own first: nexus device name NAME): %w",
				agent, KeyPath(agent), device, agent, ErrKeyMissing)
		}
	}
	return addDeviceKey(v, agent, device)
}

// listsDevice reports whether id lists a key for device.
func listsDevice(id *Identity, device string) bool {
	for _, dk := range id.DeviceKeys {
		if dk.Device == device {
			return true
		}
	}
	return false
}

// NewDeviceKey makes agent a new private key on this machine and lists
// its public key under device in IDENTITY.md, on purpose: for a key file
// that was lost (see [ErrKeyMissing]) or cannot be read as a key. A key
// file that cannot be used is kept beside it as NAME.key.unusable-UNIXTIME
// (not read as a key); a usable key is never replaced, and NewDeviceKey
// refuses with [ErrKeyExists]. Entries the old key signed still verify: its
// public key stays listed.
func NewDeviceKey(v *vault.Vault, agent, device string, now time.Time) (*Signer, error) {
	if err := ValidName(agent); err != nil {
		return nil, err
	}
	if err := vault.CheckDeviceName(device); err != nil {
		return nil, err
	}
	unlock, err := v.Lock("identity-" + agent)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := vault.Stat(v.MustPath(IdentityPath(agent))); err != nil {
		return nil, fmt.Errorf("agent %q: %w", agent, ErrNoAgent)
	}
	keyPath := v.MustPath(KeyPath(agent))
	if _, err := vault.Lstat(keyPath); err == nil {
		if _, err := LoadSigner(v, agent); err == nil {
			return nil, fmt.Errorf("agent %s: %s is kept, a new one is not made (it signed entries): %w", agent, KeyPath(agent), ErrKeyExists)
		}
		aside := fmt.Sprintf("%s.unusable-%d", keyPath, now.Unix())
		if err := vault.Rename(keyPath, aside); err != nil {
			return nil, fmt.Errorf("set aside unusable key: %w", err)
		}
	}
	return addDeviceKey(v, agent, device)
}

// addDeviceKey is [SignerFor] after its checks, with the agent's identity
// lock held: the key (made if missing), listed under device.
func addDeviceKey(v *vault.Vault, agent, device string) (*Signer, error) {
	path := v.MustPath(IdentityPath(agent))
	pub, err := ensureKey(v, agent)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		data, err := vault.ReadStable(path)
		if err != nil {
			return nil, fmt.Errorf("read identity of %s: %w", agent, err)
		}
		id, lerr := Load(v, agent)
		if lerr != nil && !errors.Is(lerr, ErrKey) {
			return nil, lerr
		}
		listed := false
		for _, dk := range id.DeviceKeys {
			listed = listed || (dk.Device == device && bytes.Equal(dk.Key, pub))
		}
		if listed || (len(id.DeviceKeys) == 0 && bytes.Equal(id.PublicKey, pub)) {
			break // an older vault's single key needs no device entry
		}
		out, err := addListItem(data, "device_keys", DeviceKey{Device: device, Key: pub}.String())
		if err != nil {
			return nil, err
		}
		err = vault.ReplaceIf(path, data, out, 0o644)
		if err == nil {
			break
		}
		if !errors.Is(err, vault.ErrConflict) || attempt >= vault.CASAttempts {
			return nil, fmt.Errorf("add device key to IDENTITY.md of %s: %w", agent, err)
		}
	}
	return LoadSigner(v, agent)
}

// addListItem adds "    - item" to the frontmatter list key (creating the
// key at the end of the frontmatter if missing). Every other byte stays.
func addListItem(data []byte, key, item string) ([]byte, error) {
	fm, _, ok := vault.SplitFrontmatter(data)
	if !ok {
		return nil, fmt.Errorf("IDENTITY.md has no frontmatter to hold %s: %w", key, ErrMalformed)
	}
	nl := "\n"
	if bytes.Contains(data[:bytes.IndexByte(data, '\n')+1], []byte("\r\n")) {
		nl = "\r\n"
	}
	start := bytes.IndexByte(data, '\n') + 1 // fm starts after the opening "---" line
	lines := strings.SplitAfter(string(fm), "\n")
	var b strings.Builder
	done := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		b.WriteString(l)
		if done || strings.TrimRight(l, "\r\n") != key+":" {
			continue
		}
		for i+1 < len(lines) && lines[i+1] != "" && strings.ContainsRune(" \t-", rune(lines[i+1][0])) {
			i++
			b.WriteString(lines[i])
		}
		b.WriteString("    - " + item + nl)
		done = true
	}
	if !done {
		if s := b.String(); s != "" && !strings.HasSuffix(s, "\n") {
			b.WriteString(nl)
		}
		b.WriteString(key + ":" + nl + "    - " + item + nl)
	}
	out := append([]byte{}, data[:start]...)
	out = append(out, b.String()...)
	out = append(out, data[start+len(fm):]...)
	return out, nil
}
