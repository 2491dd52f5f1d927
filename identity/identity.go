package identity

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/internal/scan"
	"github.com/nexus-memory/nexus/vault"
)

// Identity is what IDENTITY.md says about an agent.
type Identity struct {
	Name    string
	Role    string
	Created time.Time
	// PublicKey is the agent's first key (public_key in the frontmatter),
	// kept so that vaults from before device keys keep verifying.
	PublicKey ed25519.PublicKey
	// DeviceKeys are the keys of the devices the agent writes from
	// (device_keys in the frontmatter), one per device; see [DeviceKey].
	DeviceKeys []DeviceKey
	// Rotations are the device keys replaced on purpose, each signed by
	// the key it replaced (key_rotations; see [Rotation]). Only valid
	// ones are kept.
	Rotations []Rotation
	// Body is the markdown a person edits: role, priorities, limits,
	// relation to other agents.
	Body string
}

// Fingerprint returns a short, stable name for the agent's public key.
func (id *Identity) Fingerprint() string { return Fingerprint(id.PublicKey) }

// Fingerprint returns "SHA256:" and the first 16 hex digits of the SHA-256
// of a public key.
func Fingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "SHA256:" + hex.EncodeToString(sum[:8])
}

// reservedNames are names Windows gives to devices: a key file called
// nul.key would silently swallow the private key there.
var reservedNames = map[string]bool{
	"con": true, "prn": true, "aux": true, "nul": true,
	"com1": true, "com2": true, "com3": true, "com4": true, "com5": true, "com6": true, "com7": true, "com8": true, "com9": true,
	"lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true, "lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true,
}

// ValidName reports whether name is a safe agent name (see [ErrBadName]).
func ValidName(name string) error {
	if name == "" || len(name) > 64 {
		return ErrBadName
	}
	if reservedNames[name] {
		return fmt.Errorf("%q cannot be an agent name: Windows reserves it for a device, so its folder could not sync there: %w", name, vault.ErrInvalid)
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case (r == '-' || r == '_') && i > 0:
		default:
			return ErrBadName
		}
	}
	return nil
}

// Home returns the vault-relative folder of an agent's profile home.
func Home(name string) string { return vault.AgentsDir + "/" + name }

// IdentityPath returns the vault-relative path of an agent's IDENTITY.md.
func IdentityPath(name string) string { return Home(name) + "/IDENTITY.md" }

// KeyPath returns the vault-relative path of an agent's private key.
func KeyPath(name string) string { return vault.KeysDir + "/" + name + ".key" }

// Create makes a new agent identity: an ed25519 key pair (the private key
// in .nexus/keys/NAME.key, mode 0600) and agents/NAME/IDENTITY.md with the
// public key in its frontmatter and headings for a person to fill in.
// The key is listed under this machine's device name, so Create refuses,
// writing nothing, where appends do ([vault.Vault.CheckDevice]): in a
// vault folder copied from another machine, or under a device name another
// machine claimed ([vault.ErrCopiedVault], [vault.ErrDeviceTaken]).
func Create(v *vault.Vault, name, role string, now time.Time) (*Identity, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	role = strings.TrimSpace(role)
	if role != "" {
		if err := vault.CheckText("role", role, 500); err != nil {
			return nil, err
		}
		if strings.ContainsAny(role, "\r\n") {
			return nil, fmt.Errorf("role must be one line: %w", vault.ErrInvalid)
		}
		// The role opens the agent's session-start render (SPEC §2).
		if err := scan.Text(role); err != nil {
			return nil, fmt.Errorf("role: %w", err)
		}
	}
	unlock, err := v.Lock("identity-" + name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	idPath := v.MustPath(IdentityPath(name))
	if _, err := vault.Stat(idPath); err == nil {
		return nil, fmt.Errorf("create agent %s: %w", name, ErrExists)
	}
	// The key is listed under this machine's device name: not in a vault
	// folder copied from another machine (its name is that machine's),
	// nor under a name another machine claimed. Checked before the key
	// is made, so a refusal leaves nothing behind.
	device, err := v.CheckDevice()
	if err != nil {
		return nil, fmt.Errorf("create agent %s: %w", name, err)
	}
	pub, err := ensureKey(v, name)
	if err != nil {
		return nil, err
	}
	id := &Identity{Name: name, Role: role, Created: now.UTC().Truncate(time.Second), PublicKey: pub,
		DeviceKeys: []DeviceKey{{Device: device, Key: pub}}}
	if err := vault.MkdirAll(filepath.Dir(idPath), 0o755); err != nil {
		return nil, fmt.Errorf("create agent home: %w", err)
	}
	if err := vault.ReplaceIf(idPath, nil, render(id), 0o644); err != nil {
		return nil, fmt.Errorf("write IDENTITY.md: %w", err)
	}
	return id, nil
}

// ensureKey returns the agent's public key, creating its key pair unless a
// key file is already there. An existing key is kept, never replaced: it
// signed entries in the log that must still verify (an agent whose
// IDENTITY.md was deleted gets it back with the same key).
func ensureKey(v *vault.Vault, name string) (ed25519.PublicKey, error) {
	keyPath := v.MustPath(KeyPath(name))
	if _, err := vault.Lstat(keyPath); err == nil {
		s, err := LoadSigner(v, name)
		if err != nil {
			return nil, fmt.Errorf("agent %s: %s exists but cannot be used; move it away to start with a new key: %w", name, KeyPath(name), err)
		}
		return s.PublicKey(), nil
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	if err := vault.MkdirAll(filepath.Dir(keyPath), 0o700); err != nil {
		return nil, fmt.Errorf("create keys folder: %w", err)
	}
	keyText := "ed25519-private:" + base64.StdEncoding.EncodeToString(priv.Seed()) + "\n"
	if err := vault.ReplaceIf(keyPath, nil, []byte(keyText), 0o600); err != nil {
		return nil, fmt.Errorf("write key: %w", err)
	}
	return pub, nil
}

func render(id *Identity) []byte {
	role := id.Role
	if role == "" {
		role = "(not set)"
	}
	roleYAML, _ := yamlScalar(id.Role)
	return []byte(fmt.Sprintf(`---
name: %s
role: %s
created: %s
public_key: %s
device_keys:
    - %s
---
# %s

## Role
%s

## Priorities
(none yet)

## Never without permission
(none yet)

## Relation to other agents
(none yet)
`, id.Name, roleYAML, id.Created.Format(time.RFC3339), EncodePublicKey(id.PublicKey), id.DeviceKeys[0].String(), id.Name, role))
}

// EncodePublicKey renders a public key as it appears in IDENTITY.md.
func EncodePublicKey(pub ed25519.PublicKey) string {
	return "ed25519:" + base64.StdEncoding.EncodeToString(pub)
}

// DecodePublicKey parses the public_key property of IDENTITY.md.
func DecodePublicKey(s string) (ed25519.PublicKey, error) {
	b64, ok := strings.CutPrefix(strings.TrimSpace(s), "ed25519:")
	if !ok {
		return nil, fmt.Errorf("public key %q: want ed25519:BASE64: %w", s, ErrKey)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("public key %q is not a valid ed25519 key: %w", s, ErrKey)
	}
	return ed25519.PublicKey(raw), nil
}

// Check returns nil when name is a valid agent name with an IDENTITY.md in
// v: else the [ValidName] error or a [*NoAgentError].
func Check(v *vault.Vault, name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	if _, err := vault.Stat(v.MustPath(IdentityPath(name))); err != nil {
		return &NoAgentError{Name: name}
	}
	return nil
}

// Load reads an agent's IDENTITY.md.
func Load(v *vault.Vault, name string) (*Identity, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	data, err := vault.ReadFile(v.MustPath(IdentityPath(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &NoAgentError{Name: name}
	}
	if err != nil {
		return nil, fmt.Errorf("read identity of %s: %w", name, err)
	}
	props, body, err := vault.ParseFrontmatter(data)
	if err != nil {
		// Keep the agent usable: its body is still who it is.
		return &Identity{Name: name, Body: string(data)}, fmt.Errorf("IDENTITY.md of %s: %w: %v", name, ErrMalformed, err)
	}
	id := &Identity{Name: name, Body: string(body)}
	id.Role, _ = props["role"].(string)
	switch c := props["created"].(type) {
	case time.Time:
		id.Created = c
	case string:
		id.Created, _ = time.Parse(time.RFC3339, c)
	}
	var keyErr error
	if dks, ok := props["device_keys"].([]any); ok {
		for _, item := range dks {
			s, _ := item.(string)
			dk, err := ParseDeviceKey(s)
			if err != nil {
				keyErr = errors.Join(keyErr, err)
				continue
			}
			id.DeviceKeys = append(id.DeviceKeys, dk)
		}
	}
	id.Rotations = rotations(name, props)
	pk, _ := props["public_key"].(string)
	if id.PublicKey, err = DecodePublicKey(pk); err != nil {
		if len(id.DeviceKeys) == 0 {
			return id, fmt.Errorf("IDENTITY.md of %s: %w", name, err)
		}
		id.PublicKey = id.DeviceKeys[0].Key
	}
	if keyErr != nil {
		return id, fmt.Errorf("IDENTITY.md of %s: %w", name, keyErr)
	}
	return id, nil
}

// List returns the names of the agents in the vault (folders under agents/
// holding an IDENTITY.md), sorted.
func List(v *vault.Vault) ([]string, error) {
	entries, err := vault.ReadDir(v.MustPath(vault.AgentsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() || ValidName(e.Name()) != nil {
			continue
		}
		if _, err := vault.Stat(v.MustPath(IdentityPath(e.Name()))); err == nil {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

func yamlScalar(s string) (string, error) {
	line, err := vault.SetProperty(nil, "x", s)
	if err != nil {
		return "", err
	}
	v := strings.TrimPrefix(strings.SplitN(string(line), "\n", 3)[1], "x: ")
	return v, nil
}
