package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

// otherDevice lists a key of a device "laptop" for lyra in IDENTITY.md, as
// a second machine does on its first append, and writes a signed feed of
// lyra@laptop with that key: a new writer for this machine. It returns the
// laptop's private key.
func otherDevice(t *testing.T, dir string) ed25519.PrivateKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	idPath := filepath.Join(dir, filepath.FromSlash(identity.IdentityPath("lyra")))
	data, err := os.ReadFile(idPath)
	if err != nil {
		t.Fatal(err)
	}
	item := "device_keys:\n    - " + identity.DeviceKey{Device: "laptop", Key: pub}.String() + "\n"
	if err := os.WriteFile(idPath, bytes.Replace(data, []byte("device_keys:\n"), []byte(item), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	// The laptop's key file, swapped in for one append as lyra@laptop.
	keyPath := filepath.Join(dir, ".nexus", "keys", "lyra.key")
	own, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	laptop := "ed25519-private:" + base64.StdEncoding.EncodeToString(priv.Seed()) + "\n"
	if err := os.WriteFile(keyPath, []byte(laptop), 0o600); err != nil {
		t.Fatal(err)
	}
	// The device file is written directly: 'nexus device name' would pin
	// this machine's key (here the laptop's, swapped in) for its old name.
	devPath := filepath.Join(dir, filepath.FromSlash(vault.DeviceFile))
	if err := os.WriteFile(devPath, []byte("laptop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, e := logCLI(t, "", "--vault", dir, "--agent", "lyra", "log", "append", "from the laptop"); code != 0 {
		t.Fatalf("append as lyra@laptop: %s", e)
	}
	if err := os.WriteFile(devPath, []byte("box\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, own, 0o600); err != nil {
		t.Fatal(err)
	}
	return priv
}

// trustVault is a vault on device box where lyra appended, and where
// lyra@laptop, a device this machine never saw, appeared since.
func trustVault(t *testing.T, dir string) {
	t.Helper()
	if code, _, e := logCLI(t, "", "--vault", dir, "device", "name", "box"); code != 0 {
		t.Fatalf("device name: %s", e)
	}
	if code, _, e := logCLI(t, "", "--vault", dir, "--agent", "lyra", "log", "append", "from the box"); code != 0 {
		t.Fatalf("append: %s", e)
	}
	if code, _, e := logCLI(t, "", "--vault", dir, "log", "verify"); code != 0 {
		t.Fatalf("verify before: %s", e)
	}
	otherDevice(t, dir)
}

// TestLogTrust: a new device of a known agent is named by verify (exit 1)
// until a person trusts it; trust asks for --yes off a terminal, shows the
// fingerprints, refuses agents, and then verify passes.
func TestLogTrust(t *testing.T) {
	dir := logVault(t)
	trustVault(t, dir)
	code, out, _ := logCLI(t, "", "--vault", dir, "log", "verify")
	if code != 1 || !strings.Contains(out, "new writer: lyra@laptop#1") || !strings.Contains(out, "nexus log trust lyra@laptop") {
		t.Fatalf("verify with a new writer: exit %d\n%s", code, out)
	}
	code, _, errs := logCLI(t, "", "--vault", dir, "doctor")
	if code != 1 || !strings.Contains(errs+out, "") {
		t.Fatalf("doctor with a new writer: exit %d", code)
	}
	cases := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"not a terminal", []string{"log", "trust", "lyra@laptop"}, 2, "add --yes"},
		{"an agent", []string{"--agent", "lyra", "log", "trust", "lyra@laptop", "--yes"}, 1, ""},
		{"no key for the device", []string{"log", "trust", "lyra@nowhere", "--yes"}, 1, "lists no key for device nowhere"},
		{"not a writer", []string{"log", "trust", "lyra", "--yes"}, 2, "AGENT@DEVICE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := logCLI(t, "", append([]string{"--vault", dir}, c.args...)...)
			if code != c.code || !strings.Contains(errs, c.says) {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.code, errs)
			}
		})
	}
	if code, _, _ := logCLI(t, "", "--vault", dir, "log", "verify"); code != 1 {
		t.Fatalf("a refused trust changed something: verify exit %d", code)
	}
	code, out, errs = logCLI(t, "", "--vault", dir, "--json", "log", "trust", "lyra@laptop", "--yes")
	var res struct {
		Success bool
		Writer  string
		Old     []string
		New     []string
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || !res.Success || res.Writer != "lyra@laptop" || len(res.Old) != 0 || len(res.New) != 1 || !strings.HasPrefix(res.New[0], "SHA256:") {
		t.Fatalf("trust: exit %d %v\n%s%s", code, err, out, errs)
	}
	if code, out, _ := logCLI(t, "", "--vault", dir, "log", "verify"); code != 0 {
		t.Fatalf("verify after trust: exit %d\n%s", code, out)
	}
}

// TestAgentRotateKey: a rotation signed by the old key is accepted by a
// machine that pinned the old one, without a person; the old entries
// still verify.
func TestAgentRotateKey(t *testing.T) {
	dir := logVault(t)
	must := func(args ...string) string {
		t.Helper()
		code, out, errs := logCLI(t, "", append([]string{"--vault", dir}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
		}
		return out
	}
	must("--agent", "lyra", "log", "append", "before")
	must("log", "verify")
	// A second machine's view: this machine's key not its own, but pinned.
	before, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(identity.IdentityPath("lyra"))))
	out := must("--json", "agent", "rotate-key", "lyra")
	var res struct{ Old, New string }
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Old == res.New || !strings.HasPrefix(res.New, "SHA256:") {
		t.Fatalf("rotate-key: %v %s", err, out)
	}
	after, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(identity.IdentityPath("lyra"))))
	if !bytes.HasPrefix(after, before[:3]) || !strings.Contains(string(after), "key_rotations:") {
		t.Fatalf("IDENTITY.md after rotate-key:\n%s", after)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, ".nexus", "keys", "lyra.key.rotated-*"))
	if len(matches) != 1 {
		t.Fatalf("old key kept aside: %v", matches)
	}
	must("--agent", "lyra", "log", "append", "after")
	out = must("log", "verify")
	if !strings.Contains(out, "2 intact") {
		t.Fatalf("verify after rotation: %s", out)
	}
	// Rotating needs the old key.
	if code, _, _ := logCLI(t, "", "--vault", dir, "agent", "rotate-key", "ella"); code != 0 {
		t.Fatalf("rotate-key ella: exit %d", code)
	}
	if err := os.Remove(filepath.Join(dir, ".nexus", "keys", "ella.key")); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := logCLI(t, "", "--vault", dir, "agent", "rotate-key", "ella"); code != 1 || !strings.Contains(errs, "no key on this machine to rotate") {
		t.Fatalf("rotate-key without a key: exit %d %s", code, errs)
	}
}
