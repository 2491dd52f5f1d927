package identity

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestMissingKeyIsNeverANewIdentity: a key file gone while IDENTITY.md
// lists a key for this device is refused by SignerFor (nothing is made),
// until NewDeviceKey makes one on purpose; an agent whose IDENTITY.md
// lists keys of other devices only gets its first key here silently, as a
// new machine should.
func TestMissingKeyIsNeverANewIdentity(t *testing.T) {
	now := time.Date(2026, 12, 4, 1, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		device   string // the device SignerFor signs as
		damage   func(t *testing.T, keyPath string)
		refused  bool // SignerFor refuses with ErrKeyMissing
		newKeyOK bool // NewDeviceKey succeeds
	}{
		{"key file removed, key listed for this device", "box", func(t *testing.T, p string) { os.Remove(p) }, true, true},
		{"key file removed, listed for another device only", "laptop", func(t *testing.T, p string) { os.Remove(p) }, false, false}, // SignerFor made it
		{"key file intact", "box", func(t *testing.T, p string) {}, false, false},
		{"key file damaged", "box", func(t *testing.T, p string) { os.WriteFile(p, []byte("not a key\n"), 0o600) }, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := mustVault(t)
			if err := v.SetDevice("box"); err != nil {
				t.Fatal(err)
			}
			if _, err := Create(v, "lyra", "", now); err != nil {
				t.Fatal(err)
			}
			keyPath := v.MustPath(KeyPath("lyra"))
			tc.damage(t, keyPath)
			_, err := SignerFor(v, "lyra", tc.device)
			if got := errors.Is(err, ErrKeyMissing); got != tc.refused {
				t.Fatalf("SignerFor: %v, want refused %v", err, tc.refused)
			}
			if tc.refused {
				if _, err := os.Stat(keyPath); err == nil {
					t.Fatal("a refused SignerFor made a key")
				}
			}
			s, err := NewDeviceKey(v, "lyra", "box", now)
			if (err == nil) != tc.newKeyOK {
				t.Fatalf("NewDeviceKey: %v, want ok %v", err, tc.newKeyOK)
			}
			if !tc.newKeyOK {
				if !errors.Is(err, ErrKeyExists) {
					t.Fatalf("NewDeviceKey of a usable key: %v", err)
				}
				return
			}
			id, err := Load(v, "lyra")
			if err != nil || !id.Has(s.PublicKey()) || len(id.Keys()) < 2 {
				t.Fatalf("IDENTITY.md after NewDeviceKey: %v %+v", err, id)
			}
			if _, err := SignerFor(v, "lyra", "box"); err != nil {
				t.Fatalf("SignerFor after NewDeviceKey: %v", err)
			}
			aside, _ := filepath.Glob(keyPath + ".unusable-*")
			if damaged := tc.name == "key file damaged"; damaged != (len(aside) == 1) {
				t.Fatalf("damaged key kept aside: %v", aside)
			}
		})
	}
}
