package livelog

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/internal/atomicfile"
	"github.com/nexus-memory/nexus/vault"
)

// Keys are pinned, not trusted from the vault (SPEC §4). IDENTITY.md
// shows an agent's public keys, but anyone who can write the vault can
// write there. So each machine pins the key of every writer (agent@device)
// the first time it sees the writer's entries with a valid signature, in
// pinsFile (machine-local: .nexus/state is never synced), like SSH's
// known_hosts. Afterwards:
//
//   - an entry of a pinned writer that verifies only with another key
//     listed in IDENTITY.md is "key changed" (above what this machine saw
//     of the feed) or "forged" (at or below: the feed was re-signed);
//   - a writer not pinned, of an agent this machine pinned on other
//     devices (or holds a key of), whose key is not one of those, is a
//     "new writer";
//   - a writer whose device has no key at all in IDENTITY.md is "forged";
//
// until a person accepts the key ([Log.Trust], 'nexus log trust WRITER'),
// or the new key is signed by a pinned one ([identity.Rotation], made by
// 'nexus agent rotate-key'). This machine's own key for an agent counts as
// pinned for AGENT@THIS-DEVICE.
const (
	pinsFile = StateDir + "/pins.json"
	pinsLock = "livelog-pins"
)

// How a pin was made, as pinsFile records it.
const (
	pinFirstUse = "first use"
	pinTrusted  = "trusted by a person"
	pinRotation = "rotation signed by the pinned key"
	pinOwn      = "this machine's own key"
)

// pinRec is one writer's pinned keys.
type pinRec struct {
	// Keys are ed25519:BASE64, oldest first; entries signed by any of
	// them verify (a key replaced keeps its old entries valid).
	Keys  []string  `json:"keys"`
	Since time.Time `json:"since"`
	How   string    `json:"how"`
}

type pinSet struct {
	Writers map[string]pinRec `json:"writers"`
}

// loadPins reads this machine's pins (none yet: an empty set).
func (l *Log) loadPins() (pinSet, error) {
	var p pinSet
	err := readJSON(l.abs(pinsFile), &p)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if err != nil {
		return p, fmt.Errorf("read %s: %w", pinsFile, err)
	}
	if p.Writers == nil {
		p.Writers = map[string]pinRec{}
	}
	return p, nil
}

// updatePins applies fn to the pins under their lock and, if fn says it
// changed them, writes them atomically: concurrent processes never lose
// each other's pins.
func (l *Log) updatePins(fn func(p *pinSet) bool) error {
	unlock, err := l.v.Lock(pinsLock)
	if err != nil {
		return err
	}
	defer unlock()
	p, err := l.loadPins()
	if err != nil {
		return err
	}
	if !fn(&p) {
		return nil
	}
	doc, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", pinsFile, err)
	}
	path := l.abs(pinsFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", pinsFile, err)
	}
	if err := atomicfile.WriteFile(path, append(doc, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", pinsFile, err)
	}
	return nil
}

// pin adds keys to writer's pin (made with how), reporting whether that
// changed anything.
func (p *pinSet) pin(writer string, keys []ed25519.PublicKey, how string, now time.Time) bool {
	rec, ok := p.Writers[writer]
	changed := false
	for _, k := range keys {
		s := identity.EncodePublicKey(k)
		if !containsString(rec.Keys, s) {
			rec.Keys = append(rec.Keys, s)
			changed = true
		}
	}
	if !changed && ok {
		return false
	}
	rec.Since, rec.How = now.UTC().Truncate(time.Second), how
	p.Writers[writer] = rec
	return true
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// trustMode is how a writer's entries are judged (see [trustView.writer]).
type trustMode int

const (
	// trustKeys: entries must verify with the keys given.
	trustKeys trustMode = iota
	// trustNewWriter: a device this machine has not pinned, of an agent
	// it pinned on other devices, with a key it does not know.
	trustNewWriter
	// trustNoKey: IDENTITY.md lists no key for the writer's device and
	// this machine pinned none: nobody known can have signed its entries.
	trustNoKey
)

// trustView is what this machine trusts, as of one check: the pins, its
// own keys, and the vault's keys and rotations.
type trustView struct {
	kr     identity.Keyring
	rots   map[string][]identity.Rotation
	pins   pinSet
	device string
	v      *vault.Vault
	own    map[string]ed25519.PublicKey // agent -> this machine's key, nil if none (see ownKey)
}

// newTrustView reads the pins and the rotations in IDENTITY.md (kr's
// agents' keys; this machine's own keys are read when asked for).
func (l *Log) newTrustView(kr identity.Keyring) (*trustView, error) {
	pins, err := l.loadPins()
	if err != nil {
		return nil, err
	}
	_, rots, err := l.keysAndRotations()
	if err != nil {
		return nil, err
	}
	device, _ := l.device()
	return &trustView{kr: kr, rots: rots, pins: pins, device: device, v: l.v, own: map[string]ed25519.PublicKey{}}, nil
}

// ownKey is this machine's key of agent, nil if it has none.
func (t *trustView) ownKey(agent string) ed25519.PublicKey {
	k, ok := t.own[agent]
	if !ok {
		if s, err := identity.LoadSigner(t.v, agent); err == nil {
			k = s.PublicKey()
		}
		t.own[agent] = k
	}
	return k
}

// pinned returns the keys this machine accepts for writer on its own
// account: pinned ones, its own key if the writer is this machine's, and
// keys reached from those by valid rotations.
func (t *trustView) pinned(writer string) []ed25519.PublicKey {
	agent, device, _ := strings.Cut(writer, "@")
	var base []ed25519.PublicKey
	for _, s := range t.pins.Writers[writer].Keys {
		if k, err := identity.DecodePublicKey(s); err == nil {
			base = append(base, k)
		}
	}
	if k := t.ownKey(agent); k != nil && device == t.device {
		base = append(base, k)
	}
	if len(base) == 0 {
		return nil
	}
	return identity.Accepted(t.rots[agent], device, base)
}

// pinnedAs reports whether k is one of the keys pinsFile holds for writer.
func (t *trustView) pinnedAs(writer string, k ed25519.PublicKey) bool {
	return containsString(t.pins.Writers[writer].Keys, identity.EncodePublicKey(k))
}

// signedWith returns which of keys made sig over msg, nil if none.
func signedWith(keys []ed25519.PublicKey, msg, sig []byte) ed25519.PublicKey {
	for _, k := range keys {
		if identity.VerifySignature(k, msg, sig) {
			return k
		}
	}
	return nil
}

// agentPinned returns every key this machine accepts for any writer of
// agent.
func (t *trustView) agentPinned(agent string) []ed25519.PublicKey {
	var out []ed25519.PublicKey
	for w := range t.pins.Writers {
		if WriterAgent(w) == agent {
			out = append(out, t.pinned(w)...)
		}
	}
	if k := t.ownKey(agent); k != nil {
		out = append(out, k)
	}
	return out
}

// writer says how writer's entries are judged and with which keys; first
// is true when the writer is seen for the first time here and its keys
// are to be pinned once an entry verifies with them.
func (t *trustView) writer(writer string) (mode trustMode, keys []ed25519.PublicKey, first bool) {
	if keys := t.pinned(writer); len(keys) > 0 {
		return trustKeys, keys, false
	}
	agent, device, _ := strings.Cut(writer, "@")
	dev := t.kr.DeviceKeys(agent, device)
	if len(dev) == 0 {
		return trustNoKey, nil, false
	}
	known := t.agentPinned(agent)
	if len(known) == 0 {
		return trustKeys, dev, true // trust on first use
	}
	var same []ed25519.PublicKey
	for _, k := range dev {
		if hasKey(known, k) {
			same = append(same, k)
		}
	}
	if len(same) > 0 {
		// The same key under another device name: already trusted.
		return trustKeys, same, true
	}
	return trustNewWriter, dev, false
}

func hasKey(ks []ed25519.PublicKey, k ed25519.PublicKey) bool {
	for _, x := range ks {
		if bytes.Equal(x, k) {
			return true
		}
	}
	return false
}

// verifies reports whether sig is a signature of msg by one of keys.
func verifies(keys []ed25519.PublicKey, msg, sig []byte) bool {
	for _, k := range keys {
		if identity.VerifySignature(k, msg, sig) {
			return true
		}
	}
	return false
}

// fingerprints lists the keys' fingerprints, comma-separated.
func fingerprints(keys []ed25519.PublicKey) string {
	fps := make([]string, len(keys))
	for i, k := range keys {
		fps[i] = identity.Fingerprint(k)
	}
	return strings.Join(fps, ", ")
}

// explain names an entry of a pinned writer (f) whose signature does not
// verify with the writer's pinned keys: made with another key listed in
// IDENTITY.md, it was re-signed ("forged", at or below seen, what this
// machine saw of the feed) or made after a key change nobody accepted
// ("key changed"); else as any failed signature ([sigFailure]).
func (t *trustView) explain(f Finding, pinned []ed25519.PublicKey, seen int64, msg, sig []byte) Finding {
	for _, dk := range t.kr[f.Agent] {
		if !identity.VerifySignature(dk.Key, msg, sig) {
			continue
		}
		fp := identity.Fingerprint(dk.Key)
		// Re-signed: an entry this machine saw the feed reach, signed
		// with a key that replaced the pinned one in IDENTITY.md. (With
		// the pinned key still listed beside it, two machines may be
		// signing as one writer: a key change, not a rewrite.)
		if f.Seq <= seen && !t.listed(f.Writer, pinned) {
			f.Status, f.Detail = StatusForged, fmt.Sprintf("re-signed with key %s, not with the key this machine pinned for %s (%s): the feed was rewritten after this machine saw it reach %d", fp, f.Writer, fingerprints(pinned), seen)
		} else {
			f.Status, f.Detail = StatusKeyChanged, fmt.Sprintf("signed with key %s (in IDENTITY.md), but this machine pinned %s for %s: if the agent's key was changed on purpose, accept it with 'nexus log trust %s'; if not, its IDENTITY.md and feed were tampered with", fp, fingerprints(pinned), f.Writer, f.Writer)
		}
		return f
	}
	return sigFailure(t.kr, f, f.Agent, msg, sig)
}

// listed reports whether IDENTITY.md still lists one of keys for
// writer's device.
func (t *trustView) listed(writer string, keys []ed25519.PublicKey) bool {
	agent, device, _ := strings.Cut(writer, "@")
	for _, k := range t.kr.DeviceKeys(agent, device) {
		if hasKey(keys, k) {
			return true
		}
	}
	return false
}

// TrustChange is what [Log.Trust] does, or did, for one writer.
type TrustChange struct {
	Writer string `json:"writer"`
	// Old are the fingerprints this machine accepted before (none for a
	// new writer); New those it accepts after.
	Old []string `json:"old"`
	New []string `json:"new"`
	// Changed is false when every key was already accepted.
	Changed bool `json:"changed"`
	// keys are the keys to pin.
	keys []ed25519.PublicKey
}

// TrustPlan says what [Log.Trust] would do for writer (AGENT@DEVICE):
// the fingerprints this machine accepts for it now and the keys of its
// device that IDENTITY.md lists, which Trust pins.
func (l *Log) TrustPlan(writer string) (TrustChange, error) {
	agent, device, ok := strings.Cut(writer, "@")
	if !ok || identity.ValidName(agent) != nil || vault.CheckDeviceName(device) != nil {
		return TrustChange{}, fmt.Errorf("writer %q: want AGENT@DEVICE (see 'nexus log feeds'): %w", writer, vault.ErrInvalid)
	}
	kr, err := identity.LoadKeyring(l.v)
	if err != nil {
		return TrustChange{}, err
	}
	t, err := l.newTrustView(kr)
	if err != nil {
		return TrustChange{}, err
	}
	old := t.pinned(writer)
	dev := kr.DeviceKeys(agent, device)
	if len(dev) == 0 {
		return TrustChange{}, fmt.Errorf("trust %s: IDENTITY.md of %s lists no key for device %s: %w", writer, agent, device, ErrNothingToTrust)
	}
	c := TrustChange{Writer: writer, Old: []string{}, New: []string{}, keys: dev}
	for _, k := range old {
		c.Old = append(c.Old, identity.Fingerprint(k))
	}
	all := append(append([]ed25519.PublicKey{}, old...), dev...)
	for _, k := range all {
		if fp := identity.Fingerprint(k); !containsString(c.New, fp) {
			c.New = append(c.New, fp)
		}
		c.Changed = c.Changed || !hasKey(old, k)
	}
	sort.Strings(c.Old)
	sort.Strings(c.New)
	return c, nil
}

// Trust is a person accepting writer's keys as IDENTITY.md lists them now
// (after a key change or for a new device), and its feed as it is now:
// the keys are pinned beside those pinned before (entries they signed
// still verify), and this machine's witness of the writer starts again
// from what is here, so a rewrite or rollback it named before is no
// longer reported. Entries re-signed with a key the person accepts are
// intact from then on: read the old and new fingerprints first.
func (l *Log) Trust(writer string) (TrustChange, error) {
	c, err := l.TrustPlan(writer)
	if err != nil {
		return c, err
	}
	now := l.opts.Now()
	if err := l.updatePins(func(p *pinSet) bool { return p.pin(writer, c.keys, pinTrusted, now) }); err != nil {
		return c, err
	}
	err = l.updateWitness(func(w *witness) bool {
		for _, m := range w.Feeds {
			delete(m, writer)
		}
		for rel, sc := range w.Files {
			if sc.Writer == writer || strings.TrimSuffix(filepath.Base(rel), ".md") == writer {
				delete(w.Files, rel)
			}
		}
		return true
	})
	if err != nil {
		return c, err
	}
	for _, stream := range []string{streamLive, streamDecisions} {
		files, err := l.streamFiles(stream)
		if err != nil {
			return c, err
		}
		if _, err := l.refresh(stream, files); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Rotated records a key rotation this machine made for writer (see
// [identity.RotateKey]): both keys are pinned, so entries the old key
// signed stay intact here whatever IDENTITY.md says later.
func (l *Log) Rotated(writer string, old, nw ed25519.PublicKey) error {
	now := l.opts.Now()
	return l.updatePins(func(p *pinSet) bool {
		return p.pin(writer, []ed25519.PublicKey{old, nw}, pinRotation, now)
	})
}

// PinOwnKeys pins, for every agent this machine holds a private key of,
// that key for the writer AGENT@DEVICE under the current device name. A
// machine's own key counts as pinned for its own device without this;
// pinning it explicitly keeps those entries trusted after the device is
// renamed, or after a copied vault folder gives up the other machine's
// keys ('nexus device name').
func (l *Log) PinOwnKeys() error {
	device, err := l.device()
	if err != nil || device == "" {
		return err
	}
	names, err := identity.List(l.v)
	if err != nil {
		return err
	}
	now := l.opts.Now()
	return l.updatePins(func(p *pinSet) bool {
		changed := false
		for _, agent := range names {
			s, err := identity.LoadSigner(l.v, agent)
			if err != nil {
				continue
			}
			changed = p.pin(agent+"@"+device, []ed25519.PublicKey{s.PublicKey()}, pinOwn, now) || changed
		}
		return changed
	})
}
