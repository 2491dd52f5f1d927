package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

// keyFiles returns the vault-relative paths of the private key files.
func (c *checker) keyFiles() ([]string, error) {
	entries, err := vault.ReadDir(c.abs(vault.KeysDir))
	if notExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".key") && !strings.HasPrefix(e.Name(), ".") {
			keys = append(keys, vault.KeysDir+"/"+e.Name())
		}
	}
	sort.Strings(keys)
	return keys, nil
}

// keyModes checks that private key files are readable by their owner only.
func (c *checker) keyModes(ctx context.Context) (string, []Finding, error) {
	keys, err := c.keyFiles()
	if err != nil {
		return "", nil, err
	}
	if !modesApply {
		return plural(len(keys), "key file", "key files") + "; file modes are not checked on this system", nil, nil
	}
	var findings []Finding
	for _, k := range keys {
		st, err := vault.Stat(c.abs(k))
		if err != nil {
			return "", findings, err
		}
		if mode := st.Mode().Perm(); mode&0o077 != 0 {
			findings = append(findings, Finding{
				Path:    k,
				Problem: fmt.Sprintf("private key has mode %04o: other users can read it and sign as this agent", mode),
				Fix:     "chmod 600 " + Quote(c.abs(k)),
			})
		}
	}
	return plural(len(keys), "key file", "key files") + ", mode 0600 expected", findings, nil
}

// keyPairs checks that every agent's private key matches the public key in
// its IDENTITY.md, and that no key file is left without an agent.
func (c *checker) keyPairs(ctx context.Context) (string, []Finding, error) {
	names, err := identity.List(c.v)
	if err != nil {
		return "", nil, err
	}
	var findings []Finding
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
		err := identity.CheckKeyPair(c.v, n)
		if err == nil {
			continue
		}
		keyPath := c.abs(identity.KeyPath(n))
		f := Finding{Path: identity.KeyPath(n), Problem: err.Error()}
		_, serr := vault.Stat(keyPath)
		if notExist(serr) && !c.hadKey(n) {
			continue // an agent of other machines: its key here is made on its first append here
		}
		_, lerr := identity.LoadSigner(c.v, n)
		newKey := c.cmd("agent", "new-key", n)
		switch {
		case c.droppedKeyFix(n+"@") != "":
			continue // a merge dropped it from IDENTITY.md: the machine check names it (devices.go)
		case notExist(serr):
			f.Problem = fmt.Sprintf("agent %s has no private key here although IDENTITY.md lists one for this machine: it cannot sign log entries or decisions (they are refused, not signed with a new key)", n)
			f.Fix = newKey + "  # a new key for this machine, on purpose; or restore the old one from a backup: cp BACKUP/" + identity.KeyPath(n) + " " + Quote(keyPath) + " && chmod 600 " + Quote(keyPath)
		case lerr != nil && !errors.Is(lerr, fs.ErrPermission) && serr == nil:
			// The key file itself is damaged: IDENTITY.md is not to blame.
			f.Problem = fmt.Sprintf("the key file of agent %s cannot be read as a key (%v): it cannot sign log entries or decisions", n, lerr)
			f.Fix = newKey + "  # sets the damaged file aside and makes a new key for this machine; or restore it from a backup: cp BACKUP/" + identity.KeyPath(n) + " " + Quote(keyPath)
		case errors.Is(err, fs.ErrPermission) || errors.Is(serr, fs.ErrPermission):
			// Not a bad key: this user may not read it (keys are 0600).
			f.Problem = fmt.Sprintf("could not check agent %s's key pair: %v", n, err)
			f.Fix = "run " + c.cmd("doctor") + " as the user who owns the vault (keys are readable by it alone)"
			f.Unchecked = true
		case errors.Is(err, identity.ErrKey) && strings.Contains(err.Error(), "does not match"):
			f.Fix = "restore the agent's own key from a backup (cp BACKUP/" + identity.KeyPath(n) + " " + Quote(keyPath) +
				"), or, if the key in IDENTITY.md is the wrong one, restore " + Quote(c.abs(identity.IdentityPath(n))) + " from a backup; then run " + c.cmd("doctor")
		default:
			f.Path = identity.IdentityPath(n)
			f.Fix = "repair the frontmatter of " + Quote(c.abs(identity.IdentityPath(n))) + " (public_key: ed25519:...) or restore it from a backup; then run " + c.cmd("doctor")
		}
		findings = append(findings, f)
	}
	keys, err := c.keyFiles()
	if err != nil {
		return "", findings, err
	}
	for _, k := range keys {
		n := strings.TrimSuffix(filepath.Base(k), ".key")
		if !known[n] {
			findings = append(findings, Finding{
				Path:    k,
				Problem: fmt.Sprintf("key file for %s, but agents/%s/IDENTITY.md does not exist", n, n),
				Fix:     "restore " + Quote(c.abs(identity.IdentityPath(n))) + " from a backup, or move the unused key out of the vault: mv " + Quote(c.abs(k)) + " BACKUP/",
			})
		}
	}
	if len(findings) > 0 {
		return "key pairs of " + plural(len(names), "agent", "agents") + " checked", findings, nil
	}
	return plural(len(names), "agent", "agents") + ": private keys match IDENTITY.md", findings, nil
}

// hadKey reports whether this machine had a key for agent: IDENTITY.md
// lists one for this machine's device name (or a name it had before), or
// holds only an older vault's single key. An agent created on another
// machine has no key here until it first appends here.
func (c *checker) hadKey(agent string) bool {
	id, err := identity.Load(c.v, agent)
	if id == nil || (err != nil && !errors.Is(err, identity.ErrKey)) {
		return true // cannot tell: report the missing key
	}
	own, err := c.ownDevices()
	if err != nil {
		return true
	}
	named := false
	for _, dk := range id.DeviceKeys {
		if dk.Device == "" {
			continue
		}
		named = true
		if own[dk.Device] {
			return true
		}
	}
	return !named
}

// ownDevices returns this machine's device name and the names it had
// before.
func (c *checker) ownDevices() (map[string]bool, error) {
	d, err := c.v.Device()
	if err != nil {
		return nil, err
	}
	former, err := c.v.FormerDevices()
	if err != nil {
		return nil, err
	}
	own := map[string]bool{d: true}
	for _, f := range former {
		own[f] = true
	}
	return own, nil
}
