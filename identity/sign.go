package identity

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/nexus-memory/nexus/vault"
)

// Signer signs on behalf of one agent. It is safe for concurrent use.
type Signer struct {
	Agent string
	key   ed25519.PrivateKey
}

// LoadSigner reads an agent's private key from .nexus/keys/NAME.key.
func LoadSigner(v *vault.Vault, name string) (*Signer, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	data, err := vault.ReadFile(v.MustPath(KeyPath(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("agent %q has no key in %s: %w", name, vault.KeysDir, ErrKey)
	}
	if err != nil {
		return nil, fmt.Errorf("read key of %s: %w", name, err)
	}
	b64, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "ed25519-private:")
	seed, derr := base64.StdEncoding.DecodeString(b64)
	if !ok || derr != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("key file of %s is malformed: %w", name, ErrKey)
	}
	return &Signer{Agent: name, key: ed25519.NewKeyFromSeed(seed)}, nil
}

// Sign signs msg.
func (s *Signer) Sign(msg []byte) []byte { return ed25519.Sign(s.key, msg) }

// PublicKey returns the signer's public key.
func (s *Signer) PublicKey() ed25519.PublicKey { return s.key.Public().(ed25519.PublicKey) }

// CheckKeyPair reports whether an agent's private key matches the public key
// in its IDENTITY.md.
func CheckKeyPair(v *vault.Vault, name string) error {
	id, err := Load(v, name)
	if err != nil {
		return err
	}
	s, err := LoadSigner(v, name)
	if err != nil {
		return err
	}
	if !id.Has(s.PublicKey()) {
		return fmt.Errorf("agent %s: private key does not match any public key in IDENTITY.md: %w", name, ErrKey)
	}
	return nil
}

// Keyring maps agent names to their public keys (one per device, see
// [DeviceKey]; an older vault's single key has Device ""), as IDENTITY.md
// files state them.
type Keyring map[string][]DeviceKey

// LoadKeyring reads the public keys of every agent in the vault. Agents
// whose IDENTITY.md has no valid key are left out.
func LoadKeyring(v *vault.Vault) (Keyring, error) {
	names, err := List(v)
	if err != nil {
		return nil, err
	}
	kr := Keyring{}
	for _, n := range names {
		id, err := Load(v, n)
		var pe *fs.PathError
		if id == nil && errors.As(err, &pe) {
			// Unreadable (permissions, an I/O error), not absent or
			// malformed: without its keys every entry of the agent would
			// look forged, so the check cannot be made.
			return nil, err
		}
		if id != nil && len(id.Keys()) > 0 && (err == nil || errors.Is(err, ErrKey)) {
			kr[n] = id.Keys()
		}
	}
	return kr, nil
}

// Verify reports whether sig is agent's signature of msg under the one
// signature rule (see [VerifySignature]). An unknown agent never verifies.
func (kr Keyring) Verify(agent string, msg, sig []byte) bool {
	if len(sig) != ed25519.SignatureSize {
		return false
	}
	for _, dk := range kr[agent] {
		if VerifySignature(dk.Key, msg, sig) {
			return true
		}
	}
	return false
}

// Key returns the key agent uses on device: the last one listed for that
// device (a new key or a rotation adds its key after the older ones),
// else its first key.
func (kr Keyring) Key(agent, device string) (ed25519.PublicKey, bool) {
	ks := kr[agent]
	for i := len(ks) - 1; i >= 0; i-- {
		if ks[i].Device == device {
			return ks[i].Key, true
		}
	}
	if len(ks) > 0 {
		return ks[0].Key, true
	}
	return nil, false
}

// DeviceKeys returns the keys IDENTITY.md lists for agent on device, and
// an older vault's single key (listed under no device).
func (kr Keyring) DeviceKeys(agent, device string) []ed25519.PublicKey {
	var out []ed25519.PublicKey
	for _, dk := range kr[agent] {
		if dk.Device == device || dk.Device == "" {
			out = append(out, dk.Key)
		}
	}
	return out
}

// Signer returns which known agent's key made sig over msg, if any: a
// signature that does not verify for its claimed agent but does for another
// is a forgery.
func (kr Keyring) Signer(msg, sig []byte) (string, bool) {
	for name := range kr {
		if kr.Verify(name, msg, sig) {
			return name, true
		}
	}
	return "", false
}
