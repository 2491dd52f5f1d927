package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/nexus-memory/nexus/vault"
)

func TestDeviceCommand(t *testing.T) {
	dir := t.TempDir()
	if code, _, e := logCLI(t, "", "init", dir); code != 0 {
		t.Fatalf("init: %s", e)
	}
	host, _ := os.Hostname()
	code, out, errs := logCLI(t, "", "--vault", dir, "device")
	if code != 0 || strings.TrimSpace(out) != vault.SafeDeviceName(host) {
		t.Fatalf("device: exit %d, %q %s", code, out, errs)
	}
	code, out, errs = logCLI(t, "", "--vault", dir, "--json", "device", "name", "vps")
	var res deviceResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Device != "vps" || !res.Changed {
		t.Fatalf("device name vps: exit %d, %q %s", code, out, errs)
	}
	code, out, _ = logCLI(t, "", "--vault", dir, "--json", "device")
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Device != "vps" {
		t.Fatalf("device after rename: %q", out)
	}
	code, out, errs = logCLI(t, "", "--vault", dir, "--json", "device", "name", "My Laptop")
	if code != 2 || !strings.Contains(errs, "a-z, 0-9") || !strings.Contains(out, `"success":false`) {
		t.Fatalf("bad name: exit %d, %q %q", code, out, errs)
	}
	if code, _, _ := logCLI(t, "", "--vault", dir, "device", "name"); code != 2 {
		t.Fatalf("device name without NAME: exit %d", code)
	}
}
