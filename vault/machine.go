package vault

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// MachineFile is this machine's record of itself (SPEC §4 "A device is a
// machine, not a name"): a random id made on first use, and what the
// folder it was made in and the system it runs on look like. It is
// machine-local state, but a whole copy of the vault folder (cp -a, rsync
// -a, a restored backup) carries it along; [Vault.CheckMachine] tells such
// a copy by comparing the record with what it cannot carry.
const MachineFile = StateDir + "/machine"

// DevicesDir holds one claim per device name, DEVICE.md, saying which
// machine (by its random id) writes under that name. Unlike MachineFile it
// is synced, so a second machine that picks a name already in use learns it
// before its first append.
const DevicesDir = "log/devices"

// machineIDFiles are where the operating system keeps a machine's own id
// (systemd and D-Bus on Linux, the host id on the BSDs). None of them is
// inside the vault, so no copy of the vault carries it.
var machineIDFiles = []string{"/etc/machine-id", "/var/lib/dbus/machine-id", "/etc/hostid"}

// systemID returns a digest of the system's machine id, or "" where there
// is none (a container without /etc/machine-id, macOS, Windows). Tests
// replace it to play another machine.
var systemID = sync.OnceValue(func() string {
	for _, p := range machineIDFiles {
		if data, err := os.ReadFile(p); err == nil {
			if id := bytes.TrimSpace(data); len(id) > 0 {
				sum := sha256.Sum256(append([]byte("nexus-machine:"), id...))
				return hex.EncodeToString(sum[:12])
			}
		}
	}
	return ""
})

// Machine is this machine's record of itself ([MachineFile]).
type Machine struct {
	// ID is random, made on first use: what a device claim names.
	ID string
	// System is a digest of the operating system's machine id
	// (/etc/machine-id), or "" where there is none.
	System string
	// Folder identifies the .nexus/state folder on its file system (its
	// inode number), or "" where that is not known. A copy of the folder
	// is a new folder, even on the same machine.
	Folder string
	// Host is the host name when the record was made, to name the machine
	// in messages; it decides nothing (containers change it every run).
	Host    string
	Created time.Time
}

// copied reports why the folder at hand is not the one the record m was made
// in, on the machine it was made on: "" when it is. cur is what the folder
// and system look like now. A value not known on either side (no machine
// id on this system, no inode number) is not compared.
func (m *Machine) copied(cur Machine) string {
	var why []string
	if m.System != "" && cur.System != "" && m.System != cur.System {
		why = append(why, "the system's machine id, /etc/machine-id, is not the one it was made on")
	}
	if m.Folder != "" && cur.Folder != "" && m.Folder != cur.Folder {
		why = append(why, StateDir+"/ is not the folder it was made in, so it was copied or restored")
	}
	return strings.Join(why, "; ")
}

func (m *Machine) encode() []byte {
	return fmt.Appendf(nil, "# This machine's identity for Nexus (never synced; see docs/vault.md#devices)\nid: %s\nsystem: %s\nfolder: %s\nhost: %s\ncreated: %s\n",
		m.ID, m.System, m.Folder, m.Host, m.Created.UTC().Format(time.RFC3339))
}

// keyValues reads "key: value" lines; other lines are skipped.
func keyValues(data []byte) map[string][]string {
	out := map[string][]string{}
	for _, line := range strings.Split(string(data), "\n") {
		k, val, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || strings.HasPrefix(k, "#") || strings.ContainsAny(k, " \t") {
			continue
		}
		out[k] = append(out[k], strings.TrimSpace(val))
	}
	return out
}

func decodeMachine(data []byte) (*Machine, error) {
	kv := keyValues(data)
	one := func(k string) string {
		if v := kv[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	m := &Machine{ID: one("id"), System: one("system"), Folder: one("folder"), Host: one("host")}
	m.Created, _ = time.Parse(time.RFC3339, one("created"))
	if !validMachineID(m.ID) {
		return nil, fmt.Errorf("%s is damaged (no valid id line): delete it, and the next append makes this machine a new one: %w", MachineFile, ErrInvalid)
	}
	return m, nil
}

func validMachineID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

// here is what this folder and system look like now (no id).
func (v *Vault) here() Machine {
	m := Machine{System: systemID()}
	if st, err := os.Stat(filepath.Join(v.root, filepath.FromSlash(StateDir))); err == nil {
		m.Folder = folderID(st)
	}
	return m
}

// current is [Vault.here] with a new random id, for a new record.
func (v *Vault) current() (Machine, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Machine{}, fmt.Errorf("make machine id: %w", err)
	}
	host, _ := os.Hostname()
	m := v.here()
	m.ID, m.Host, m.Created = hex.EncodeToString(b[:]), SafeDeviceName(host), time.Now().UTC().Truncate(time.Second)
	return m, nil
}

// Machine returns this machine's record, or nil when none was made yet
// (the first write makes it, see [Vault.CheckMachine]). Copied is why the
// vault folder is a copy of another machine's ("" when it is not).
func (v *Vault) Machine() (m *Machine, copied string, err error) {
	data, err := os.ReadFile(filepath.Join(v.root, filepath.FromSlash(MachineFile)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read machine id: %w", err)
	}
	if m, err = decodeMachine(data); err != nil {
		return nil, "", err
	}
	return m, m.copied(v.here()), nil
}

// ensureMachine returns this machine's record, making it if missing.
func (v *Vault) ensureMachine() (*Machine, string, error) {
	m, copied, err := v.Machine()
	if err != nil || m != nil {
		return m, copied, err
	}
	cur, err := v.current()
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(v.root, filepath.FromSlash(MachineFile))
	if err := ReplaceIf(path, nil, cur.encode(), 0o644); err != nil {
		if errors.Is(err, ErrConflict) {
			return v.Machine() // another process made it first
		}
		return nil, "", fmt.Errorf("write machine id: %w", err)
	}
	return &cur, "", nil
}

// DeviceClaim is one device name's claim ([DevicesDir]): which machine
// writes under it.
type DeviceClaim struct {
	Device string
	// Machines are the machine ids the claim names: one, unless two
	// machines claimed the name at once and a sync tool kept both lines.
	Machines []string
	// Former are names the claiming machine had before this one.
	Former []string
	Host   string
	Path   string // vault-relative
}

func claimPath(device string) string { return DevicesDir + "/" + device + ".md" }

// DeviceClaim reads the claim of device, or returns nil when there is none.
func (v *Vault) DeviceClaim(device string) (*DeviceClaim, error) {
	if err := CheckDeviceName(device); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(v.root, filepath.FromSlash(claimPath(device))))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read device claim: %w", err)
	}
	return decodeClaim(device, data), nil
}

func decodeClaim(device string, data []byte) *DeviceClaim {
	kv := keyValues(data)
	c := &DeviceClaim{Device: device, Path: claimPath(device)}
	for _, id := range kv["machine"] {
		if validMachineID(id) && !contains(c.Machines, id) {
			c.Machines = append(c.Machines, id)
		}
	}
	for _, line := range kv["former"] {
		for _, f := range strings.Split(line, ",") {
			if f = strings.TrimSpace(f); CheckDeviceName(f) == nil && !contains(c.Former, f) {
				c.Former = append(c.Former, f)
			}
		}
	}
	if h := kv["host"]; len(h) > 0 {
		c.Host = h[0]
	}
	return c
}

// DeviceClaims returns every device claim in the vault, by name.
func (v *Vault) DeviceClaims() ([]DeviceClaim, error) {
	des, err := os.ReadDir(filepath.Join(v.root, filepath.FromSlash(DevicesDir)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read device claims: %w", err)
	}
	var out []DeviceClaim
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".md")
		if !ok || !de.Type().IsRegular() || CheckDeviceName(name) != nil {
			continue
		}
		c, err := v.DeviceClaim(name)
		if err != nil {
			return nil, err
		}
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Device < out[j].Device })
	return out, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// claim writes the claim of device for machine m, unless there is one.
func (v *Vault) claim(device string, m *Machine) (*DeviceClaim, error) {
	former, err := v.FormerDevices()
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("---\ndevice: %s\nmachine: %s\nhost: %s\nformer: %s\n---\nThe machine with this id writes as AGENT@%s (feeds log/live/*/AGENT@%s.md).\nNexus wrote this file on the machine's first append under the name; see docs/vault.md#devices.\n",
		device, m.ID, m.Host, strings.Join(former, ", "), device, device)
	path := filepath.Join(v.root, filepath.FromSlash(claimPath(device)))
	if err := ReplaceIf(path, nil, []byte(text), 0o644); err != nil && !errors.Is(err, ErrConflict) {
		return nil, fmt.Errorf("write device claim: %w", err)
	}
	return v.DeviceClaim(device)
}

// CheckMachine is the gate before anything is written under this machine's
// device name (an append, a decision, a clearing): it returns the device
// name when this machine owns it, and an error wrapping [ErrCopiedVault] or
// [ErrDeviceTaken] when it must not write there. On first use it makes the
// machine record ([MachineFile]) and the name's claim ([DevicesDir]).
// Reading never goes through it: a copied vault reads as before.
func (v *Vault) CheckMachine() (string, error) {
	device, err := v.Device()
	if err != nil {
		return "", err
	}
	m, copied, err := v.ensureMachine()
	if err != nil {
		return "", err
	}
	if copied != "" {
		return "", copiedError(copied, device, "append")
	}
	c, err := v.DeviceClaim(device)
	if err != nil {
		return "", err
	}
	if c == nil {
		if c, err = v.claim(device, m); err != nil {
			return "", err
		}
	}
	if err := takenError(c, m.ID); err != nil {
		return "", err
	}
	return device, nil
}

// CheckDevice is [Vault.CheckMachine] without its first-use writes, for
// what lists a key under this machine's device name before anything is
// appended under it (a new agent's IDENTITY.md): it returns the device
// name, or an error wrapping [ErrCopiedVault] when this vault folder is a
// copy of another machine's, or [ErrDeviceTaken] when another machine
// claimed the name. It writes nothing: the name is claimed by the first
// append, as before.
func (v *Vault) CheckDevice() (string, error) {
	device, err := v.Device()
	if err != nil {
		return "", err
	}
	m, copied, err := v.Machine()
	if err != nil {
		return "", err
	}
	if copied != "" {
		return "", copiedError(copied, device, "list a key")
	}
	c, err := v.DeviceClaim(device)
	if err != nil || c == nil {
		return device, err
	}
	id := ""
	if m != nil {
		id = m.ID
	}
	// No record here yet: the first write makes one with a new id, which
	// a claim already made is not.
	if err := takenError(c, id); err != nil {
		return "", err
	}
	return device, nil
}

// copiedError is the refusal to write under device in a vault folder
// copied from another machine (why: copied), doing what it was about to.
func copiedError(copied, device, doing string) error {
	return fmt.Errorf("this vault folder was copied from another machine (%s), so it must not %s under that machine's device name %q: give this machine a name of its own with 'nexus device name NAME' (reading works meanwhile): %w", copied, doing, device, ErrCopiedVault)
}

// takenError is the refusal to write under a device name the claim c
// gives to a machine other than id, or nil.
func takenError(c *DeviceClaim, id string) error {
	for _, m := range c.Machines {
		if m != id {
			host := ""
			if c.Host != "" {
				host = " (host " + c.Host + ")"
			}
			return fmt.Errorf("device name %q belongs to another machine%s, see %s: give this machine a name of its own with 'nexus device name NAME' (reading works meanwhile): %w", c.Device, host, c.Path, ErrDeviceTaken)
		}
	}
	return nil
}

// copyState is what a copied vault folder carries of the other machine's
// own state, set aside by [Vault.SetDevice] when this machine takes a name
// of its own: its private keys (they would let this machine sign as that
// one), the names it had, and the hints of where its own appends ended.
var copyState = []string{KeysDir, FormerDevicesFile, StateDir + "/livelog/feeds"}

// adoptCopy makes this copied vault folder a machine of its own: a new
// machine record, and the other machine's own state removed (copyState).
func (v *Vault) adoptCopy() error {
	for _, rel := range copyState {
		p := filepath.Join(v.root, filepath.FromSlash(rel))
		if rel == KeysDir {
			des, err := os.ReadDir(p)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove the other machine's keys: %w", err)
			}
			for _, de := range des {
				if err := os.Remove(filepath.Join(p, de.Name())); err != nil {
					return fmt.Errorf("remove the other machine's keys: %w", err)
				}
			}
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("remove the other machine's state: %w", err)
		}
	}
	cur, err := v.current()
	if err != nil {
		return err
	}
	if err := WriteFile(filepath.Join(v.root, filepath.FromSlash(MachineFile)), cur.encode(), 0o644); err != nil {
		return fmt.Errorf("write machine id: %w", err)
	}
	return nil
}

// DeviceSettled reports whether two machines' use of the device name d is
// over: one of them took a name of its own. Either d is a name this
// machine had before (it moved off), or another machine's claim of its
// new name lists d as a name it had. What the two wrote under d stays;
// nothing more is added to the branch the renamed machine left. Errors
// reading the claims count as "not settled".
func (v *Vault) DeviceSettled(d string) bool {
	if d == "" {
		return false
	}
	if cur, err := v.Device(); err == nil && cur != d {
		if former, err := v.FormerDevices(); err == nil && contains(former, d) {
			return true
		}
	}
	claims, err := v.DeviceClaims()
	if err != nil {
		return false
	}
	for _, cl := range claims {
		if cl.Device != d && contains(cl.Former, d) {
			return true
		}
	}
	return false
}
