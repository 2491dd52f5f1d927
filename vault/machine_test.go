package vault

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// copyVault copies the whole folder from to to, .nexus/ included, as cp -a
// does: the copy's files and folders are new ones.
func copyVault(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil // lock files are regular; sockets are not copied
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, _ := d.Info()
		return os.WriteFile(dst, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// playSystem makes systemID return id for the rest of the test.
func playSystem(t *testing.T, id string) {
	old := systemID
	systemID = func() string { return id }
	t.Cleanup(func() { systemID = old })
}

func newDeviceVault(t *testing.T, device string) *Vault {
	t.Helper()
	v, _, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := v.SetDevice(device); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCheckMachineClaimsTheName(t *testing.T) {
	v := newDeviceVault(t, "laptop")
	if _, err := os.Stat(v.MustPath(DevicesDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("setting the name wrote into the synced vault: %v", err)
	}
	d, err := v.CheckMachine()
	if err != nil || d != "laptop" {
		t.Fatalf("CheckMachine = %q, %v", d, err)
	}
	m, copied, err := v.Machine()
	if err != nil || m == nil || copied != "" {
		t.Fatalf("Machine = %+v, %q, %v", m, copied, err)
	}
	c, err := v.DeviceClaim("laptop")
	if err != nil || c == nil || len(c.Machines) != 1 || c.Machines[0] != m.ID {
		t.Fatalf("claim = %+v, %v (machine %s)", c, err, m.ID)
	}
	// Again: the same machine, the same answer, nothing rewritten.
	before, _ := os.ReadFile(v.MustPath(claimPath("laptop")))
	if d, err := v.CheckMachine(); err != nil || d != "laptop" {
		t.Fatalf("second CheckMachine = %q, %v", d, err)
	}
	after, _ := os.ReadFile(v.MustPath(claimPath("laptop")))
	if !bytes.Equal(before, after) {
		t.Errorf("claim rewritten:\n%s\n%s", before, after)
	}
	// A rename claims the new name on its first check, naming the old one.
	if err := v.SetDevice("desk"); err != nil {
		t.Fatal(err)
	}
	if _, err := v.CheckMachine(); err != nil {
		t.Fatal(err)
	}
	c, _ = v.DeviceClaim("desk")
	if c == nil || len(c.Former) != 1 || c.Former[0] != "laptop" || c.Machines[0] != m.ID {
		t.Fatalf("claim of the new name: %+v", c)
	}
	// Back to the old name: still this machine's.
	if err := v.SetDevice("laptop"); err != nil {
		t.Fatal(err)
	}
	if _, err := v.CheckMachine(); err != nil {
		t.Fatal(err)
	}
}

// TestCopiedVault: a vault folder copied whole, .nexus/ included, is told
// from the original before it writes; it takes a name of its own, and the
// original is not affected.
func TestCopiedVault(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no inode numbers: a copy on the same machine is not told (docs/vault.md)")
	}
	orig := newDeviceVault(t, "laptop")
	if _, err := orig.CheckMachine(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(orig.MustPath(KeysDir+"/lyra.key"), []byte("ed25519-private:x\n"), 0o600)
	os.WriteFile(orig.MustPath(FormerDevicesFile), []byte("old\n"), 0o644)
	dir := t.TempDir()
	copyVault(t, orig.Root(), dir)
	cp, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cp.CheckMachine(); !errors.Is(err, ErrCopiedVault) || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "nexus device name NAME") {
		t.Fatalf("CheckMachine on the copy = %v, want ErrCopiedVault naming the fix", err)
	}
	if d, err := cp.Device(); err != nil || d != "laptop" {
		t.Fatalf("reading the device name on the copy: %q, %v", d, err)
	}
	// The other machine's name stays its own, even on the copy.
	if err := cp.SetDevice("laptop"); !errors.Is(err, ErrDeviceTaken) {
		t.Fatalf("SetDevice(laptop) on the copy = %v, want ErrDeviceTaken", err)
	}
	if err := cp.SetDevice("desk"); err != nil {
		t.Fatal(err)
	}
	if d, err := cp.CheckMachine(); err != nil || d != "desk" {
		t.Fatalf("CheckMachine after the rename = %q, %v", d, err)
	}
	if _, err := os.Stat(cp.MustPath(KeysDir + "/lyra.key")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the other machine's private key stayed on the copy: %v", err)
	}
	if former, _ := cp.FormerDevices(); len(former) != 0 {
		t.Errorf("the copy took the other machine's former names: %v", former)
	}
	mo, _, _ := orig.Machine()
	mc, _, _ := cp.Machine()
	if mo.ID == mc.ID {
		t.Errorf("the copy kept the other machine's id %s", mo.ID)
	}
	// The original goes on as before.
	if d, err := orig.CheckMachine(); err != nil || d != "laptop" {
		t.Fatalf("CheckMachine on the original = %q, %v", d, err)
	}
	if _, err := os.Stat(orig.MustPath(KeysDir + "/lyra.key")); err != nil {
		t.Errorf("original's key: %v", err)
	}
}

// TestMachineSystemID: the same folder seen from another system (a disk
// moved to another computer) is a copy; a system without a machine id on
// either side compares the folder alone.
func TestMachineSystemID(t *testing.T) {
	for _, c := range []struct {
		name        string
		made, later string
		copied      bool
	}{
		{"same system", "aaaa", "aaaa", false},
		{"another system", "aaaa", "bbbb", true},
		{"no machine id when made", "", "bbbb", false},
		{"no machine id now", "aaaa", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			playSystem(t, c.made)
			v := newDeviceVault(t, "vps")
			if _, err := v.CheckMachine(); err != nil {
				t.Fatal(err)
			}
			playSystem(t, c.later)
			_, err := v.CheckMachine()
			if got := errors.Is(err, ErrCopiedVault); got != c.copied || (!c.copied && err != nil) {
				t.Fatalf("CheckMachine = %v, want copied %v", err, c.copied)
			}
		})
	}
}

// TestDeviceTaken: a second machine that picks a name another machine
// claimed (its claim arrived by sync) is refused before its first append.
func TestDeviceTaken(t *testing.T) {
	a := newDeviceVault(t, "ubuntu")
	if _, err := a.CheckMachine(); err != nil {
		t.Fatal(err)
	}
	b := newDeviceVault(t, "ubuntu") // a fresh install with the same host name
	data, _ := os.ReadFile(a.MustPath(claimPath("ubuntu")))
	if err := WriteFile(b.MustPath(claimPath("ubuntu")), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CheckMachine(); !errors.Is(err, ErrDeviceTaken) || !strings.Contains(err.Error(), "nexus device name NAME") {
		t.Fatalf("CheckMachine = %v, want ErrDeviceTaken", err)
	}
	if err := b.SetDevice("ubuntu"); !errors.Is(err, ErrDeviceTaken) {
		t.Fatalf("SetDevice = %v, want ErrDeviceTaken", err)
	}
	if err := b.SetDevice("ubuntu-2"); err != nil {
		t.Fatal(err)
	}
	if d, err := b.CheckMachine(); err != nil || d != "ubuntu-2" {
		t.Fatalf("after the rename: %q, %v", d, err)
	}
	// A claim both machines wrote at once (a sync tool kept both lines)
	// is nobody's alone: both are asked for a name of their own.
	mb, _, _ := b.Machine()
	both := append(data, []byte("machine: "+mb.ID+"\n")...)
	WriteFile(a.MustPath(claimPath("ubuntu")), both, 0o644)
	if _, err := a.CheckMachine(); !errors.Is(err, ErrDeviceTaken) {
		t.Fatalf("CheckMachine with two claims = %v", err)
	}
}
