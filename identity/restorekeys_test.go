package identity

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// TestRestoreDroppedKey: IDENTITY.md after a merge that kept the other
// machine's side (each machine had added its device key) no longer lists
// this machine's key; RestoreKeys puts it back and keeps the other one,
// whichever side the merge kept.
func TestRestoreDroppedKey(t *testing.T) {
	now := time.Date(2026, 12, 4, 1, 0, 0, 0, time.UTC)
	other, _, _ := ed25519.GenerateKey(rand.Reader)
	otherLine := DeviceKey{Device: "vps", Key: other}.String()
	for _, tc := range []struct {
		name    string
		resolve func(data string, mine string) string // the merged IDENTITY.md
		dropped bool
	}{
		{"theirs: the other machine's key only", func(data, mine string) string {
			return strings.Replace(data, "\n    - "+mine, "", 1)
		}, true},
		{"ours: both kept", func(data, mine string) string { return data }, false},
		{"every device key dropped", func(data, mine string) string {
			return strings.Replace(strings.Replace(data, "\n    - "+mine, "", 1), "    - "+otherLine+"\n", "", 1)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := mustVault(t)
			if err := v.SetDevice("laptop"); err != nil {
				t.Fatal(err)
			}
			id, err := Create(v, "lyra", "", now)
			if err != nil {
				t.Fatal(err)
			}
			// lyra was made on vps (its first key, public_key); this
			// machine added its own device key on its first append.
			mine := DeviceKey{Device: "laptop", Key: id.PublicKey}.String()
			path := v.MustPath(IdentityPath("lyra"))
			data, _ := os.ReadFile(path)
			before := strings.Replace(string(data), "public_key: "+EncodePublicKey(id.PublicKey), "public_key: "+EncodePublicKey(other), 1)
			before = strings.Replace(before, "    - "+mine, "    - "+otherLine+"\n    - "+mine, 1)
			if !strings.Contains(before, otherLine+"\n    - "+mine) {
				t.Fatalf("IDENTITY.md not as expected:\n%s", data)
			}
			merged := tc.resolve(before, mine)
			os.WriteFile(path, []byte(merged), 0o644)
			dropped, err := DroppedKeys(v)
			if err != nil || (len(dropped) == 1) != tc.dropped {
				t.Fatalf("DroppedKeys = %+v, %v; want dropped %v", dropped, err, tc.dropped)
			}
			done, err := RestoreKeys(v)
			if err != nil || len(done) != len(dropped) {
				t.Fatalf("RestoreKeys = %+v, %v", done, err)
			}
			after, _ := os.ReadFile(path)
			got, err := Load(v, "lyra")
			if err != nil || !got.Has(id.PublicKey) {
				t.Fatalf("after RestoreKeys, IDENTITY.md lacks this machine's key (%v):\n%s", err, after)
			}
			if !got.Has(other) {
				t.Errorf("RestoreKeys dropped the other machine's key:\n%s", after)
			}
			if !tc.dropped && string(after) != merged {
				t.Errorf("nothing was dropped, yet IDENTITY.md changed:\n%s", after)
			}
			if again, _ := DroppedKeys(v); len(again) != 0 {
				t.Errorf("still dropped: %+v", again)
			}
		})
	}
}

// TestRestoreKeysQuietly: the start of any command puts a dropped key back,
// but writes nothing in a vault without a machine record (a read-only
// command stays read-only) and leaves a copied vault folder's keys alone.
func TestRestoreKeysQuietly(t *testing.T) {
	now := time.Date(2026, 12, 4, 1, 0, 0, 0, time.UTC)
	v := mustVault(t)
	if err := v.SetDevice("laptop"); err != nil {
		t.Fatal(err)
	}
	id, err := Create(v, "lyra", "", now)
	if err != nil {
		t.Fatal(err)
	}
	path := v.MustPath(IdentityPath("lyra"))
	data, _ := os.ReadFile(path)
	other, _, _ := ed25519.GenerateKey(rand.Reader)
	enc := EncodePublicKey(id.PublicKey)
	theirs := strings.ReplaceAll(string(data), enc, EncodePublicKey(other))
	os.WriteFile(path, []byte(theirs), 0o644)
	os.Remove(v.MustPath(vault.MachineFile))
	if done := RestoreKeysQuietly(v); len(done) != 0 {
		t.Fatalf("restored without a machine record: %+v", done)
	}
	if _, err := v.CheckMachine(); err != nil {
		t.Fatal(err)
	}
	if done := RestoreKeysQuietly(v); len(done) != 1 || done[0].Agent != "lyra" || done[0].Device != "laptop" {
		t.Fatalf("RestoreKeysQuietly = %+v", done)
	}
	if got, _ := Load(v, "lyra"); got == nil || !got.Has(id.PublicKey) || !got.Has(other) {
		t.Fatalf("after the quiet restore: %+v", got)
	}
	// A copy of the folder on another machine: its keys are not its own.
	machine, _ := os.ReadFile(v.MustPath(vault.MachineFile))
	os.WriteFile(v.MustPath(vault.MachineFile), []byte(strings.Replace(string(machine), "folder: ", "folder: 1", 1)), 0o644)
	os.WriteFile(path, []byte(theirs), 0o644)
	if _, m, _ := v.Machine(); m == "" {
		t.Skip("no inode numbers here: a copy is not told by its folder")
	}
	if done := RestoreKeysQuietly(v); len(done) != 0 {
		t.Fatalf("restored in a copied vault: %+v", done)
	}
	if _, err := RestoreKeys(v); !errors.Is(err, vault.ErrCopiedVault) {
		t.Fatalf("RestoreKeys in a copied vault = %v", err)
	}
}
