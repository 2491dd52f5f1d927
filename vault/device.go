package vault

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DeviceFile holds this machine's device name (SPEC §4, §11). It is
// machine-local state: sync tools must not carry it to another machine.
const DeviceFile = StateDir + "/device"

// FormerDevicesFile lists the names this machine had before, one a line
// (machine-local, like DeviceFile), so that its own older feeds and keys
// are recognised as its own ([Vault.FormerDevices]).
const FormerDevicesFile = StateDir + "/device-former"

// MaxDeviceName bounds a device name.
const MaxDeviceName = 64

// windowsDevices are names Windows reserves for devices; a feed file named
// lyra@nul.md is fine, but a device called "nul" would confuse people.
var windowsDevices = map[string]bool{"con": true, "prn": true, "aux": true, "nul": true}

// CheckDeviceName reports whether name can be a device name: 1-64 of a-z,
// 0-9, '-' and '_', starting with a letter or digit. The name becomes part
// of every writer (lyra@NAME) and of feed file names.
func CheckDeviceName(name string) error {
	if name == "" || len(name) > MaxDeviceName {
		return fmt.Errorf("device name %q must be 1-%d characters: %w", name, MaxDeviceName, ErrInvalid)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '-' || c == '_') && i > 0:
		default:
			return fmt.Errorf("device name %q: use a-z, 0-9, '-' and '_' (starting with a letter or digit): %w", name, ErrInvalid)
		}
	}
	if windowsDevices[name] {
		return fmt.Errorf("device name %q is reserved on Windows: %w", name, ErrInvalid)
	}
	return nil
}

// SafeDeviceName turns a host name into a device name: its first label,
// lower case, every other character a '-', at most 64 characters. An
// empty result becomes "device".
func SafeDeviceName(host string) string {
	host, _, _ = strings.Cut(strings.TrimSpace(host), ".")
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(host) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	s := strings.TrimLeft(b.String(), "_")
	if len(s) > MaxDeviceName {
		s = strings.TrimRight(s[:MaxDeviceName], "-_")
	}
	if s == "" {
		return "device"
	}
	if windowsDevices[s] {
		s += "-pc"
	}
	return s
}

// Device returns this machine's device name: the one set with
// [Vault.SetDevice], else the host name made safe ([SafeDeviceName]). The
// default is recorded in .nexus/state/device on first use, so renaming the
// host later does not start new feeds. A damaged device file is an error
// (nothing is guessed: the name decides which feed an agent appends to).
func (v *Vault) Device() (string, error) {
	path := filepath.Join(v.root, filepath.FromSlash(DeviceFile))
	data, err := ReadFile(path)
	if err == nil {
		name := string(bytes.TrimSpace(data))
		if err := CheckDeviceName(name); err != nil {
			return "", fmt.Errorf("%s: %w; set one with 'nexus device name NAME'", DeviceFile, err)
		}
		return name, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read device name: %w", err)
	}
	host, _ := os.Hostname()
	name := SafeDeviceName(host)
	// Record it; if another process did first, use theirs.
	if err := MkdirAll(filepath.Dir(path), 0o755); err == nil {
		if err := ReplaceIf(path, nil, []byte(name+"\n"), 0o644); errors.Is(err, ErrConflict) {
			return v.Device()
		}
	}
	return name, nil
}

// SetDevice sets this machine's device name. Entries already written stay
// in the feeds of the old name; new ones go to feeds of the new name. A
// name another machine claimed ([DevicesDir]) is refused with
// [ErrDeviceTaken]. In a vault folder copied from another machine
// ([Vault.CheckMachine]) this machine becomes one of its own first: a new
// machine id, and the other machine's private keys, former names and
// append hints removed from the copy (its agents get keys of their own on
// their first append here).
func (v *Vault) SetDevice(name string) error {
	if err := CheckDeviceName(name); err != nil {
		return err
	}
	// The name is claimed by the first append under it
	// ([Vault.CheckMachine]): setting it writes nothing that syncs.
	m, copied, err := v.ensureMachine()
	if err != nil {
		return fmt.Errorf("set device name: %w", err)
	}
	if c, err := v.DeviceClaim(name); err != nil {
		return fmt.Errorf("set device name: %w", err)
	} else if c != nil && (copied != "" || !contains(c.Machines, m.ID)) && len(c.Machines) > 0 {
		return fmt.Errorf("device name %q belongs to another machine (%s): choose another name: %w", name, c.Path, ErrDeviceTaken)
	}
	if copied != "" {
		if err := v.adoptCopy(); err != nil {
			return fmt.Errorf("set device name: %w", err)
		}
	}
	path := filepath.Join(v.root, filepath.FromSlash(DeviceFile))
	if err := MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("set device name: %w", err)
	}
	if data, err := ReadFile(path); err == nil && copied == "" {
		if old := string(bytes.TrimSpace(data)); old != name && CheckDeviceName(old) == nil {
			if err := v.addFormerDevice(old); err != nil {
				return fmt.Errorf("set device name: %w", err)
			}
		}
	}
	if err := WriteFile(path, []byte(name+"\n"), 0o644); err != nil {
		return fmt.Errorf("set device name: %w", err)
	}
	return nil
}

// FormerDevices returns the device names this machine had before its
// current one ([Vault.SetDevice] records them), oldest first.
func (v *Vault) FormerDevices() ([]string, error) {
	data, err := ReadFile(filepath.Join(v.root, filepath.FromSlash(FormerDevicesFile)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read former device names: %w", err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); CheckDeviceName(line) == nil {
			out = append(out, line)
		}
	}
	return out, nil
}

func (v *Vault) addFormerDevice(name string) error {
	former, err := v.FormerDevices()
	if err != nil {
		return err
	}
	for _, f := range former {
		if f == name {
			return nil
		}
	}
	former = append(former, name)
	return WriteFile(filepath.Join(v.root, filepath.FromSlash(FormerDevicesFile)), []byte(strings.Join(former, "\n")+"\n"), 0o644)
}
