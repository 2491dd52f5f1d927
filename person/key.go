package person

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// Where the keys live, vault-relative. KeysDir is under vault.KeysDir and
// PinsDir under vault.StateDir: both machine-local, never synced. PeopleDir
// is synced, so other machines see the public keys.
const (
	KeysDir   = vault.KeysDir + "/person"
	PinsDir   = vault.StateDir + "/people"
	PeopleDir = ".nexus/people"
)

// Key file headers.
const (
	keyHeader = "nexus person key v1"
	pubHeader = "nexus person public key v1"
)

// Iterations is the PBKDF2-HMAC-SHA256 work factor of new keys (OWASP's
// 2023 figure for SHA-256).
const Iterations = 600_000

// minIterations is the least a key file may state; tests lower it.
var minIterations = Iterations

// newIterations is what Create uses; tests lower it.
var newIterations = Iterations

// MinPassphrase is the shortest passphrase Create accepts, in bytes.
const MinPassphrase = 12

// Key is an unlocked review key.
type Key struct {
	Name string
	priv ed25519.PrivateKey
}

// Public is the key's public half.
func (k *Key) Public() ed25519.PublicKey { return k.priv.Public().(ed25519.PublicKey) }

// Fingerprint is a short, readable digest of a public key: the first 16
// hex digits of its SHA-256, in groups of four.
func Fingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	h := fmt.Sprintf("%x", sum[:8])
	return h[0:4] + "-" + h[4:8] + "-" + h[8:12] + "-" + h[12:16]
}

// sealed is a parsed private key file.
type sealed struct {
	name       string
	public     ed25519.PublicKey
	iterations int
	salt       []byte
	nonce      []byte
	box        []byte
}

func parseKeyFile(data []byte) (sealed, error) {
	var s sealed
	m, err := parseFields(data, keyHeader)
	if err != nil {
		return s, err
	}
	s.name = m["name"]
	if err := CheckName(s.name); err != nil {
		return s, err
	}
	if m["kdf"] != "pbkdf2-sha256" || m["cipher"] != "aes-256-gcm" {
		return s, fmt.Errorf("kdf %q, cipher %q: want pbkdf2-sha256 and aes-256-gcm: %w", m["kdf"], m["cipher"], vault.ErrInvalid)
	}
	n, err := strconv.Atoi(m["iterations"])
	if err != nil || n < minIterations || n > 100_000_000 {
		return s, fmt.Errorf("iterations %q: want %d to 100000000: %w", m["iterations"], minIterations, vault.ErrInvalid)
	}
	s.iterations = n
	pub, err := field(m, "public", ed25519.PublicKeySize)
	if err != nil {
		return s, err
	}
	s.public = pub
	if s.salt, err = field(m, "salt", 16); err != nil {
		return s, err
	}
	if s.nonce, err = field(m, "nonce", 12); err != nil {
		return s, err
	}
	if s.box, err = field(m, "sealed", ed25519.SeedSize+16); err != nil {
		return s, err
	}
	return s, nil
}

// aead derives the key-encryption key from the passphrase.
func aead(passphrase []byte, salt []byte, iterations int) (cipher.AEAD, error) {
	kek, err := pbkdf2.Key(sha256.New, string(passphrase), salt, iterations, 32)
	if err != nil {
		return nil, fmt.Errorf("derive key: %w", err)
	}
	block, err := aes.NewCipher(kek)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// additional binds the sealed seed to its name and public key.
func additional(name string, pub ed25519.PublicKey) []byte {
	return []byte(keyHeader + "\x00" + name + "\x00" + string(pub))
}

// Create makes a review key named name, sealed with passphrase: the
// private key file under [KeysDir] (mode 0600), the public key file under
// [PeopleDir], and this machine's pin of it. It refuses when a key or a
// public key file of that name exists already.
func Create(v *vault.Vault, name string, passphrase []byte, now time.Time) (*Key, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if len(passphrase) < MinPassphrase {
		return nil, fmt.Errorf("the passphrase is shorter than %d characters: %w", MinPassphrase, vault.ErrInvalid)
	}
	for _, rel := range []string{keyPath(name), pubPath(name)} {
		if _, err := os.Lstat(v.MustPath(rel)); err == nil {
			return nil, fmt.Errorf("%s exists already; choose another name: %w", rel, vault.ErrRefused)
		}
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	salt, nonce := make([]byte, 16), make([]byte, 12)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	a, err := aead(passphrase, salt, newIterations)
	if err != nil {
		return nil, err
	}
	box := a.Seal(nil, nonce, priv.Seed(), additional(name, pub))
	keyData := formatFields(keyHeader, [][2]string{
		{"name", name},
		{"public", b64.EncodeToString(pub)},
		{"kdf", "pbkdf2-sha256"},
		{"iterations", strconv.Itoa(newIterations)},
		{"cipher", "aes-256-gcm"},
		{"salt", b64.EncodeToString(salt)},
		{"nonce", b64.EncodeToString(nonce)},
		{"sealed", b64.EncodeToString(box)},
	})
	if err := os.MkdirAll(v.MustPath(KeysDir), 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", KeysDir, err)
	}
	if err := vault.WriteFile(v.MustPath(keyPath(name)), keyData, 0o600); err != nil {
		return nil, fmt.Errorf("write review key: %w", err)
	}
	if err := os.MkdirAll(v.MustPath(PeopleDir), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", PeopleDir, err)
	}
	pubData := formatFields(pubHeader, [][2]string{
		{"name", name},
		{"public", b64.EncodeToString(pub)},
		{"created", now.UTC().Format(time.RFC3339)},
	})
	if err := vault.WriteFile(v.MustPath(pubPath(name)), pubData, 0o644); err != nil {
		return nil, fmt.Errorf("write public review key: %w", err)
	}
	if err := pin(v, name, pub); err != nil {
		return nil, err
	}
	return &Key{Name: name, priv: priv}, nil
}

// Unlock opens this machine's review key name with passphrase.
func Unlock(v *vault.Vault, name string, passphrase []byte) (*Key, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(v.MustPath(keyPath(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", name, ErrNoKey)
	}
	if err != nil {
		return nil, fmt.Errorf("read review key: %w", err)
	}
	s, err := parseKeyFile(data)
	if err != nil {
		return nil, fmt.Errorf("review key %s: %w", keyPath(name), err)
	}
	if s.name != name {
		return nil, fmt.Errorf("review key %s names %q: %w", keyPath(name), s.name, vault.ErrInvalid)
	}
	a, err := aead(passphrase, s.salt, s.iterations)
	if err != nil {
		return nil, err
	}
	seed, err := a.Open(nil, s.nonce, s.box, additional(s.name, s.public))
	if err != nil {
		return nil, ErrPassphrase
	}
	priv := ed25519.NewKeyFromSeed(seed)
	if !priv.Public().(ed25519.PublicKey).Equal(s.public) {
		return nil, fmt.Errorf("review key %s: the sealed key does not match its public key: %w", keyPath(name), vault.ErrInvalid)
	}
	return &Key{Name: name, priv: priv}, nil
}

// LocalKeys lists the names of the review keys this machine holds.
func LocalKeys(v *vault.Vault) ([]string, error) {
	des, err := os.ReadDir(v.MustPath(KeysDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", KeysDir, err)
	}
	var out []string
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".key")
		if ok && de.Type().IsRegular() && CheckName(name) == nil {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

func keyPath(name string) string { return KeysDir + "/" + name + ".key" }
func pubPath(name string) string { return PeopleDir + "/" + name + ".pub" }
func pinPath(name string) string { return PinsDir + "/" + name }

// pin records on this machine that name's key is pub.
func pin(v *vault.Vault, name string, pub ed25519.PublicKey) error {
	if err := os.MkdirAll(v.MustPath(PinsDir), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", PinsDir, err)
	}
	if err := vault.WriteFile(filepath.Join(v.MustPath(PinsDir), name), []byte(b64.EncodeToString(pub)+"\n"), 0o644); err != nil {
		return fmt.Errorf("pin review key %s: %w", name, err)
	}
	return nil
}
