package identity

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nexus-memory/nexus/vault"
)

// DroppedKey is an agent whose private key this machine holds while its
// IDENTITY.md no longer lists the public key: a merge of IDENTITY.md
// (a git conflict resolved "ours" or "theirs", a sync tool's newer copy
// winning) dropped the line this machine added. Until the key is listed
// again, every entry this machine signed with it fails verification.
type DroppedKey struct {
	Agent  string `json:"agent"`
	Device string `json:"device"` // the name it is listed under when restored
	Key    string `json:"key"`    // ed25519:BASE64
}

// DroppedKeys lists the agents whose private key on this machine
// IDENTITY.md does not list, under any device name. Agents whose key file
// or IDENTITY.md cannot be read are left out: the key-pair check of
// doctor names those.
func DroppedKeys(v *vault.Vault) ([]DroppedKey, error) {
	device, err := v.Device()
	if err != nil {
		return nil, err
	}
	des, err := os.ReadDir(v.MustPath(vault.KeysDir))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list keys: %w", err)
	}
	// A key of another agent in this agent's key file was swapped, not
	// dropped by a merge: the key-pair check of doctor names that.
	others := map[string]string{}
	// Each IDENTITY.md is read once: this runs at the start of every log
	// command, and parsing each twice was a millisecond of a log append
	// in a vault of four agents (docs/benchmarks.md, "Issue 33: start-up").
	type loaded struct {
		id  *Identity
		err error
	}
	ids := map[string]loaded{}
	if names, err := List(v); err == nil {
		for _, n := range names {
			id, err := Load(v, n)
			ids[n] = loaded{id, err}
			if id != nil {
				for _, k := range id.Keys() {
					others[string(k.Key)] = n
				}
			}
		}
	}
	var out []DroppedKey
	for _, de := range des {
		agent, ok := strings.CutSuffix(de.Name(), ".key")
		if !ok || !de.Type().IsRegular() || ValidName(agent) != nil {
			continue
		}
		l, ok := ids[agent]
		if !ok {
			l.id, l.err = Load(v, agent)
		}
		id, err := l.id, l.err
		if id == nil || (err != nil && !errors.Is(err, ErrKey)) {
			continue
		}
		s, err := LoadSigner(v, agent)
		if err != nil {
			continue
		}
		if owner, ok := others[string(s.PublicKey())]; id.Has(s.PublicKey()) || ok && owner != agent {
			continue
		}
		out = append(out, DroppedKey{Agent: agent, Device: device, Key: EncodePublicKey(s.PublicKey())})
	}
	return out, nil
}

// RestoreKeys puts this machine's public keys that a merge dropped from
// IDENTITY.md ([DroppedKeys]) back under this machine's device name: each
// added with compare-and-swap to the agent's device_keys, every other key
// and byte kept. It refuses in a vault folder copied from another machine
// ([vault.ErrCopiedVault]): the keys there are the other machine's. It
// returns what it restored.
func RestoreKeys(v *vault.Vault) ([]DroppedKey, error) {
	if _, err := v.CheckMachine(); err != nil {
		return nil, err
	}
	dropped, err := DroppedKeys(v)
	if err != nil {
		return nil, err
	}
	var done []DroppedKey
	for _, d := range dropped {
		if err := restoreKey(v, d.Agent, d.Device); err != nil {
			return done, err
		}
		done = append(done, d)
	}
	return done, nil
}

// RestoreKeysQuietly is [RestoreKeys] for the start of any command: it
// writes only when a key was dropped, never makes the machine's record or
// claim (a read-only command stays read-only), and does nothing in a
// copied vault folder or one without a machine record yet. Errors are
// left for doctor to name.
func RestoreKeysQuietly(v *vault.Vault) []DroppedKey {
	m, copied, err := v.Machine()
	if err != nil || m == nil || copied != "" {
		return nil
	}
	dropped, err := DroppedKeys(v)
	if err != nil || len(dropped) == 0 {
		return nil
	}
	var done []DroppedKey
	for _, d := range dropped {
		if restoreKey(v, d.Agent, d.Device) == nil {
			done = append(done, d)
		}
	}
	return done
}

// restoreKey lists agent's key on this machine under device, with the
// agent's identity lock held (as an append's first signature does).
func restoreKey(v *vault.Vault, agent, device string) error {
	unlock, err := v.Lock("identity-" + agent)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := addDeviceKey(v, agent, device); err != nil {
		return fmt.Errorf("restore the key of %s: %w", agent, err)
	}
	return nil
}
