package vault

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSafeDeviceName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"vps", "vps"},
		{"vps.example.com", "vps"},
		{"Janes-MacBook-Pro.local", "janes-macbook-pro"},
		{"Jane's MacBook Pro", "jane-s-macbook-pro"},
		{"", "device"},
		{"...", "device"},
		{"서버", "device"},
		{"서버-2", "2"},
		{"NUL", "nul-pc"},
		{"__x", "x"},
		{strings.Repeat("a", 80), strings.Repeat("a", 64)},
	} {
		got := SafeDeviceName(c.in)
		if got != c.want {
			t.Errorf("SafeDeviceName(%q) = %q, want %q", c.in, got, c.want)
		}
		if err := CheckDeviceName(got); err != nil {
			t.Errorf("SafeDeviceName(%q) = %q is not a valid name: %v", c.in, got, err)
		}
	}
}

func TestCheckDeviceName(t *testing.T) {
	for _, bad := range []string{"", "-x", "_x", "Vps", "a b", "a@b", "a/b", "..", "con", strings.Repeat("a", 65), "é"} {
		if err := CheckDeviceName(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckDeviceName(%q) = %v, want ErrInvalid", bad, err)
		}
	}
	for _, ok := range []string{"vps", "laptop-2", "a_b", "0"} {
		if err := CheckDeviceName(ok); err != nil {
			t.Errorf("CheckDeviceName(%q) = %v", ok, err)
		}
	}
}

func TestDeviceDefaultIsRecordedAndSettable(t *testing.T) {
	v, _, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	got, err := v.Device()
	if err != nil {
		t.Fatal(err)
	}
	if got != SafeDeviceName(host) {
		t.Fatalf("Device() = %q, want the host name made safe %q", got, SafeDeviceName(host))
	}
	data, err := os.ReadFile(filepath.Join(v.Root(), DeviceFile))
	if err != nil || strings.TrimSpace(string(data)) != got {
		t.Fatalf("default not recorded: %q, %v", data, err)
	}
	if err := v.SetDevice("Bad Name"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("SetDevice(bad) = %v", err)
	}
	if err := v.SetDevice("vps"); err != nil {
		t.Fatal(err)
	}
	if got, err := v.Device(); err != nil || got != "vps" {
		t.Fatalf("after SetDevice: %q, %v", got, err)
	}
	// The names before are remembered, once each, oldest first.
	for _, n := range []string{"vps2", "vps2", "vps"} {
		if err := v.SetDevice(n); err != nil {
			t.Fatal(err)
		}
	}
	if former, err := v.FormerDevices(); err != nil || strings.Join(former, ",") != SafeDeviceName(host)+",vps,vps2" {
		t.Fatalf("FormerDevices() = %q, %v", former, err)
	}
	// A damaged file is an error, not a silent new name.
	if err := os.WriteFile(filepath.Join(v.Root(), DeviceFile), []byte("Not/Valid\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Device(); err == nil {
		t.Fatal("damaged device file accepted")
	}
}
