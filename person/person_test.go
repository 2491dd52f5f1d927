package person_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/person"
	"github.com/nexus-memory/nexus/vault"
)

var now = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

func newVault(t *testing.T) *vault.Vault {
	t.Helper()
	dir := t.TempDir()
	v, _, err := vault.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCreateUnlockSignVerify(t *testing.T) {
	v := newVault(t)
	pass := []byte("correct horse battery")
	k, err := person.Create(v, "alice", pass, now)
	if err != nil {
		t.Fatal(err)
	}
	st := person.Statement{Item: "r-1", Kind: "fact", Decision: person.Approve, Content: "sha256:ab", Time: now}
	sig, err := k.Sign(st)
	if err != nil {
		t.Fatal(err)
	}
	other, err := person.Create(newVault(t), "alice", pass, now) // same name, another vault: not pinned here
	if err != nil {
		t.Fatal(err)
	}
	otherSig, _ := other.Sign(st)
	forged := sig
	forged.Sig = append([]byte(nil), sig.Sig...)
	forged.Sig[5] ^= 1
	changed := st
	changed.Content = "sha256:cd"
	for _, tc := range []struct {
		name string
		sig  person.Signature
		st   person.Statement
		ok   bool
	}{
		{"valid", sig, st, true},
		{"forged bytes", forged, st, false},
		{"another key under the same name", otherSig, st, false},
		{"other content", sig, changed, false},
		{"unknown signer", person.Signature{By: "bob", Sig: sig.Sig}, st, false},
		{"bad name", person.Signature{By: "../x", Sig: sig.Sig}, st, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := person.Verify(v, tc.sig, tc.st)
			if (err == nil) != tc.ok {
				t.Fatalf("Verify = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, person.ErrUnsigned) {
				t.Fatalf("error %v does not wrap ErrUnsigned", err)
			}
		})
	}
	if _, err := person.Unlock(v, "alice", []byte("wrong passphrase!")); !errors.Is(err, person.ErrPassphrase) {
		t.Fatalf("wrong passphrase: %v", err)
	}
	k2, err := person.Unlock(v, "alice", pass)
	if err != nil {
		t.Fatal(err)
	}
	if !k2.Public().Equal(k.Public()) {
		t.Fatal("unlocked key differs from the created one")
	}
	if _, err := person.Create(v, "alice", pass, now); !errors.Is(err, vault.ErrRefused) {
		t.Fatalf("second create of alice: %v", err)
	}
	if _, err := person.Create(v, "bob", []byte("short"), now); !errors.Is(err, vault.ErrInvalid) {
		t.Fatalf("short passphrase: %v", err)
	}
}

func TestKeyFileStaysOffTheVaultText(t *testing.T) {
	v := newVault(t)
	pass := []byte("correct horse battery")
	if _, err := person.Create(v, "alice", pass, now); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(v.MustPath(person.KeysDir + "/alice.key"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), string(pass)) {
		t.Fatal("the key file holds the passphrase")
	}
	fi, _ := os.Stat(v.MustPath(person.KeysDir + "/alice.key"))
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	// The private key and the pin are under folders every ignore file
	// Nexus writes excludes; the public key is not.
	for _, p := range []string{person.KeysDir, person.PinsDir} {
		if !strings.HasPrefix(p, vault.KeysDir+"/") && !strings.HasPrefix(p, vault.StateDir+"/") {
			t.Fatalf("%s is not machine-local", p)
		}
	}
	for _, p := range []string{vault.KeysDir, vault.StateDir} {
		if strings.HasPrefix(person.PeopleDir, p) {
			t.Fatalf("%s would not be synced", person.PeopleDir)
		}
	}
}

func TestPeopleStates(t *testing.T) {
	a, b := newVault(t), newVault(t)
	if _, err := person.Create(a, "alice", []byte("correct horse battery"), now); err != nil {
		t.Fatal(err)
	}
	if _, err := person.Create(b, "bob", []byte("correct horse battery"), now); err != nil {
		t.Fatal(err)
	}
	// bob's public key reaches vault a by sync.
	data, _ := os.ReadFile(b.MustPath(person.PeopleDir + "/bob.pub"))
	os.WriteFile(a.MustPath(person.PeopleDir+"/bob.pub"), data, 0o644)
	os.WriteFile(a.MustPath(person.PeopleDir+"/junk.pub"), []byte("hello"), 0o644)
	state := func() map[string]string {
		ps, err := person.People(a)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, p := range ps {
			m[p.Name] = p.State
		}
		return m
	}
	if got := state(); got["alice"] != person.Trusted || got["bob"] != person.Unpinned || got["junk"] != person.Unreadable {
		t.Fatalf("states %v", got)
	}
	if _, err := person.Trust(a, "bob"); err != nil {
		t.Fatal(err)
	}
	// A sync peer swaps alice's public key.
	alt, _ := os.ReadFile(a.MustPath(person.PeopleDir + "/bob.pub"))
	os.WriteFile(a.MustPath(person.PeopleDir+"/alice.pub"), []byte(strings.ReplaceAll(string(alt), "name: bob", "name: alice")), 0o644)
	if got := state(); got["bob"] != person.Trusted || got["alice"] != person.Changed {
		t.Fatalf("after trust and swap: %v", got)
	}
}

func FuzzParsePublic(f *testing.F) {
	f.Add([]byte("nexus person public key v1\nname: alice\npublic: " + strings.Repeat("A", 43) + "=\ncreated: 2026-05-01T10:00:00Z\n"))
	f.Add([]byte("nexus person public key v1\nname: a\nname: b\n"))
	f.Add([]byte("x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := person.ParsePublic(data)
		if err == nil && (person.CheckName(p.Name) != nil || len(p.Key) != 32) {
			t.Fatalf("accepted %q as %+v", data, p)
		}
	})
}
