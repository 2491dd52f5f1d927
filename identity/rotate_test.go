package identity

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestRotateKey: the rotation written into IDENTITY.md is valid for its
// agent and device only, both keys stay listed, the old private key is
// kept aside, and the signer is the new key.
func TestRotateKey(t *testing.T) {
	v := mustVault(t)
	if err := v.SetDevice("vps"); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(v, "lyra", "ops", time.Now()); err != nil {
		t.Fatal(err)
	}
	old, nw, err := RotateKey(v, "lyra", "vps", time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadSigner(v, "lyra")
	if err != nil || !bytes.Equal(s.PublicKey(), nw) || bytes.Equal(old, nw) {
		t.Fatalf("signer after rotate: %v", err)
	}
	if _, err := os.Stat(v.MustPath(KeyPath("lyra") + ".rotated-1700000000")); err != nil {
		t.Fatalf("old key not kept: %v", err)
	}
	id, err := Load(v, "lyra")
	if err != nil || len(id.Rotations) != 1 || !id.Has(old) || !id.Has(nw) {
		t.Fatalf("identity after rotate: %+v %v", id, err)
	}
	kr, _ := LoadKeyring(v)
	if k, _ := kr.Key("lyra", "vps"); !bytes.Equal(k, nw) {
		t.Fatal("Keyring.Key should give the device's newest key")
	}
	if got := Accepted(id.Rotations, "vps", []ed25519.PublicKey{old}); len(got) != 2 {
		t.Fatalf("Accepted from the old key: %d keys", len(got))
	}
	r := id.Rotations[0]
	other, _, _ := ed25519.GenerateKey(nil)
	cases := []struct {
		name  string
		r     Rotation
		agent string
		valid bool
	}{
		{"as written", r, "lyra", true},
		{"for another agent", r, "ella", false},
		{"for another device", Rotation{Device: "laptop", Old: r.Old, New: r.New, Sig: r.Sig}, "lyra", false},
		{"another new key", Rotation{Device: r.Device, Old: r.Old, New: other, Sig: r.Sig}, "lyra", false},
		{"round trip", mustParseRotation(t, r.String()), "lyra", true},
	}
	for _, c := range cases {
		if got := c.r.Valid(c.agent); got != c.valid {
			t.Errorf("%s: Valid = %v, want %v", c.name, got, c.valid)
		}
	}
	// Accepted does not walk other devices' rotations or backwards.
	if got := Accepted(id.Rotations, "laptop", []ed25519.PublicKey{old}); len(got) != 1 {
		t.Fatalf("Accepted on another device: %d keys", len(got))
	}
	if got := Accepted(id.Rotations, "vps", []ed25519.PublicKey{nw}); len(got) != 1 {
		t.Fatalf("Accepted backwards: %d keys", len(got))
	}
	// A rotation nobody signed is left out when IDENTITY.md is read.
	data, _ := os.ReadFile(v.MustPath(IdentityPath("lyra")))
	bad := Rotation{Device: "vps", Old: nw, New: other, Sig: r.Sig}
	data = bytes.Replace(data, []byte("key_rotations:\n"), []byte("key_rotations:\n    - "+bad.String()+"\n"), 1)
	os.WriteFile(v.MustPath(IdentityPath("lyra")), data, 0o644)
	if id, _ := Load(v, "lyra"); len(id.Rotations) != 1 {
		t.Fatalf("an unsigned rotation was kept: %d", len(id.Rotations))
	}
	// Without a key on this machine there is nothing to rotate.
	os.Remove(v.MustPath(KeyPath("lyra")))
	if _, _, err := RotateKey(v, "lyra", "vps", time.Now()); !errors.Is(err, ErrNoKeyToRotate) {
		t.Fatalf("rotate without a key: %v", err)
	}
	if _, err := ParseRotation("vps ed25519:x"); err == nil || !strings.Contains(err.Error(), "want DEVICE") {
		t.Fatalf("ParseRotation of a bad item: %v", err)
	}
}

func mustParseRotation(t *testing.T, s string) Rotation {
	t.Helper()
	r, err := ParseRotation(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
