package identity

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// Rotation is a device key replaced on purpose by the holder of the old
// one: the new key, signed by the old key. It is written in IDENTITY.md's
// frontmatter as a list item "DEVICE ed25519:OLD ed25519:NEW SIGNATURE":
//
//	key_rotations:
//	    - vps ed25519:kq3... ed25519:Zt1... 3Jx0...
//
// Anyone can write IDENTITY.md, but only the old key's holder can sign a
// rotation, so a machine that pinned the old key accepts the new one
// without asking a person (see livelog's key pins).
type Rotation struct {
	Device string
	Old    ed25519.PublicKey
	New    ed25519.PublicKey
	Sig    []byte
}

// String renders the rotation as it appears in IDENTITY.md.
func (r Rotation) String() string {
	return r.Device + " " + EncodePublicKey(r.Old) + " " + EncodePublicKey(r.New) + " " + base64.RawURLEncoding.EncodeToString(r.Sig)
}

// ParseRotation parses "DEVICE ed25519:OLD ed25519:NEW SIGNATURE".
func ParseRotation(s string) (Rotation, error) {
	f := strings.Fields(s)
	if len(f) != 4 || vault.CheckDeviceName(f[0]) != nil {
		return Rotation{}, fmt.Errorf("key rotation %q: want DEVICE ed25519:OLD ed25519:NEW SIGNATURE: %w", s, ErrKey)
	}
	old, err := DecodePublicKey(f[1])
	if err != nil {
		return Rotation{}, err
	}
	nw, err := DecodePublicKey(f[2])
	if err != nil {
		return Rotation{}, err
	}
	sig, err := base64.RawURLEncoding.DecodeString(f[3])
	if err != nil || len(sig) != ed25519.SignatureSize {
		return Rotation{}, fmt.Errorf("key rotation %q: the signature is not valid base64url: %w", s, ErrKey)
	}
	return Rotation{Device: f[0], Old: old, New: nw, Sig: sig}, nil
}

// rotationMessage is what the old key signs: the agent, the device and
// both keys, so a rotation cannot be replayed for another agent or device.
func rotationMessage(agent, device string, old, nw ed25519.PublicKey) []byte {
	return []byte("nexus key rotation v1\nagent: " + agent + "\ndevice: " + device +
		"\nold: " + EncodePublicKey(old) + "\nnew: " + EncodePublicKey(nw) + "\n")
}

// Valid reports whether the rotation is signed by its old key for agent,
// under the one signature rule ([VerifySignature]).
func (r Rotation) Valid(agent string) bool {
	return VerifySignature(r.Old, rotationMessage(agent, r.Device, r.Old, r.New), r.Sig)
}

// rotations reads the key_rotations of a parsed frontmatter: the valid
// ones (signed by their old key); the others are left out, as a rotation
// anyone could write would be worth nothing.
func rotations(agent string, props map[string]any) []Rotation {
	items, _ := props["key_rotations"].([]any)
	var out []Rotation
	for _, item := range items {
		s, _ := item.(string)
		r, err := ParseRotation(s)
		if err == nil && r.Valid(agent) {
			out = append(out, r)
		}
	}
	return out
}

// LoadRotations returns the valid key rotations of every agent in the
// vault, by agent name.
func LoadRotations(v *vault.Vault) (map[string][]Rotation, error) {
	names, err := List(v)
	if err != nil {
		return nil, err
	}
	out := map[string][]Rotation{}
	for _, n := range names {
		id, _ := Load(v, n)
		if id != nil && len(id.Rotations) > 0 {
			out[n] = id.Rotations
		}
	}
	return out, nil
}

// RotateKey makes agent a new private key on this machine and lists it in
// IDENTITY.md under device, with a rotation signed by the old key, so
// that machines which pinned the old key accept the new one. The old
// public key stays listed (entries it signed still verify); the old
// private key is kept beside the new one as NAME.key.rotated-UNIXTIME
// (never read as a key), in case a person wants it back. IDENTITY.md is
// written first: a crash before the key file is replaced leaves the old
// key in use, still valid.
func RotateKey(v *vault.Vault, agent, device string, now time.Time) (old, nw ed25519.PublicKey, err error) {
	if err := ValidName(agent); err != nil {
		return nil, nil, err
	}
	if err := vault.CheckDeviceName(device); err != nil {
		return nil, nil, err
	}
	unlock, err := v.Lock("identity-" + agent)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	path := v.MustPath(IdentityPath(agent))
	if _, err := os.Stat(path); err != nil {
		return nil, nil, fmt.Errorf("agent %q: %w", agent, ErrNoAgent)
	}
	s, err := LoadSigner(v, agent)
	if err != nil {
		return nil, nil, fmt.Errorf("rotate key of %s: %w: %w", agent, ErrNoKeyToRotate, err)
	}
	oldText, err := os.ReadFile(v.MustPath(KeyPath(agent)))
	if err != nil {
		return nil, nil, fmt.Errorf("read key of %s: %w", agent, err)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate key: %w", err)
	}
	old = s.PublicKey()
	rot := Rotation{Device: device, Old: old, New: pub}
	rot.Sig = s.Sign(rotationMessage(agent, device, old, pub))
	for attempt := 0; ; attempt++ {
		data, err := vault.ReadStable(path)
		if err != nil {
			return nil, nil, fmt.Errorf("read identity of %s: %w", agent, err)
		}
		out, err := addListItem(data, "device_keys", DeviceKey{Device: device, Key: pub}.String())
		if err == nil {
			out, err = addListItem(out, "key_rotations", rot.String())
		}
		if err != nil {
			return nil, nil, err
		}
		err = vault.ReplaceIf(path, data, out, 0o644)
		if err == nil {
			break
		}
		if !errors.Is(err, vault.ErrConflict) || attempt >= vault.CASAttempts {
			return nil, nil, fmt.Errorf("add rotated key to IDENTITY.md of %s: %w", agent, err)
		}
	}
	keyPath := v.MustPath(KeyPath(agent))
	aside := fmt.Sprintf("%s.rotated-%d", keyPath, now.Unix())
	if err := vault.ReplaceIf(aside, nil, oldText, 0o600); err != nil {
		return nil, nil, fmt.Errorf("keep the old key of %s: %w", agent, err)
	}
	keyText := "ed25519-private:" + base64.StdEncoding.EncodeToString(priv.Seed()) + "\n"
	if err := vault.ReplaceIf(keyPath, oldText, []byte(keyText), 0o600); err != nil {
		return nil, nil, fmt.Errorf("write the new key of %s: %w", agent, err)
	}
	return old, pub, nil
}

// Accepted returns the keys reached from the keys in from through valid
// rotations of device (in any number of steps), from included.
func Accepted(rots []Rotation, device string, from []ed25519.PublicKey) []ed25519.PublicKey {
	out := append([]ed25519.PublicKey{}, from...)
	for grew := true; grew; {
		grew = false
		for _, r := range rots {
			if r.Device != device || !containsKey(out, r.Old) || containsKey(out, r.New) {
				continue
			}
			out = append(out, r.New)
			grew = true
		}
	}
	return out
}

func containsKey(ks []ed25519.PublicKey, k ed25519.PublicKey) bool {
	for _, x := range ks {
		if bytes.Equal(x, k) {
			return true
		}
	}
	return false
}
