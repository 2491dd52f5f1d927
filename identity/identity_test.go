package identity

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

func mustVault(tb testing.TB) *vault.Vault {
	tb.Helper()
	v, _, err := vault.Init(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func TestValidName(t *testing.T) {
	for name, ok := range map[string]bool{
		"lyra": true, "ella-2": true, "a_b": true, "0day": true,
		"": false, "Lyra": false, "-x": false, "_x": false, "a/b": false, "..": false,
		"a b": false, "nul": false, "com1": false, "con": false, "console": true, "배포": false, strings.Repeat("a", 65): false, strings.Repeat("a", 64): true,
	} {
		if err := ValidName(name); (err == nil) != ok {
			t.Errorf("ValidName(%q) = %v", name, err)
		}
	}
}

func TestCreateLoadSignVerify(t *testing.T) {
	v := mustVault(t)
	now := time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC)
	id, err := Create(v, "lyra", "deploys and operates services: prod", now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(v, "lyra", "", now); !errors.Is(err, ErrExists) {
		t.Fatalf("second create: %v", err)
	}
	if _, err := Create(v, "ella", "two\nlines", now); !errors.Is(err, vault.ErrInvalid) {
		t.Fatalf("multi-line role: %v", err)
	}
	got, err := Load(v, "lyra")
	if err != nil {
		t.Fatal(err)
	}
	if got.Role != id.Role || !got.Created.Equal(now) || !got.PublicKey.Equal(id.PublicKey) {
		t.Fatalf("loaded %+v, created %+v", got, id)
	}
	if !strings.Contains(got.Body, "## Never without permission") {
		t.Fatalf("body lacks the seeded headings:\n%s", got.Body)
	}
	if runtime.GOOS != "windows" {
		st, err := os.Stat(v.MustPath(KeyPath("lyra")))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("key mode %v, %v", st.Mode().Perm(), err)
		}
	}
	s, err := LoadSigner(v, "lyra")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckKeyPair(v, "lyra"); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(v, "ella", "research", now); err != nil {
		t.Fatal(err)
	}
	kr, err := LoadKeyring(v)
	if err != nil || len(kr) != 2 {
		t.Fatalf("keyring %v, %v", kr, err)
	}
	msg := []byte("entry")
	sig := s.Sign(msg)
	if !kr.Verify("lyra", msg, sig) {
		t.Fatal("own signature does not verify")
	}
	if kr.Verify("ella", msg, sig) || kr.Verify("nobody", msg, sig) || kr.Verify("lyra", []byte("entrY"), sig) {
		t.Fatal("signature verifies for the wrong agent or message")
	}
	if who, ok := kr.Signer(msg, sig); !ok || who != "lyra" {
		t.Fatalf("Signer = %q %v", who, ok)
	}
	names, _ := List(v)
	if strings.Join(names, ",") != "ella,lyra" {
		t.Fatalf("List = %v", names)
	}
}

func TestKeyMismatchAndBadFiles(t *testing.T) {
	v := mustVault(t)
	now := time.Now()
	Create(v, "lyra", "", now)
	Create(v, "ella", "", now)
	// Swap lyra's key file for ella's: the pair no longer matches.
	ella, _ := os.ReadFile(v.MustPath(KeyPath("ella")))
	os.WriteFile(v.MustPath(KeyPath("lyra")), ella, 0o600)
	if err := CheckKeyPair(v, "lyra"); !errors.Is(err, ErrKey) {
		t.Fatalf("mismatch not found: %v", err)
	}
	os.WriteFile(v.MustPath(KeyPath("lyra")), []byte("garbage"), 0o600)
	if _, err := LoadSigner(v, "lyra"); !errors.Is(err, ErrKey) {
		t.Fatalf("garbage key: %v", err)
	}
	if _, err := Load(v, "ghost"); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("missing agent: %v", err)
	}
	if _, err := Load(v, "../x"); !errors.Is(err, ErrBadName) {
		t.Fatalf("bad name: %v", err)
	}
}

// TestCreateKeepsExistingKey: an agent whose IDENTITY.md was deleted gets it
// back with its old key, so what it signed still verifies.
func TestCreateKeepsExistingKey(t *testing.T) {
	v := mustVault(t)
	first, err := Create(v, "lyra", "ops", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	key, _ := os.ReadFile(v.MustPath(KeyPath("lyra")))
	os.Remove(v.MustPath(IdentityPath("lyra")))
	again, err := Create(v, "lyra", "ops", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !again.PublicKey.Equal(first.PublicKey) {
		t.Fatal("re-created agent got a new key; its old signatures no longer verify")
	}
	if key2, _ := os.ReadFile(v.MustPath(KeyPath("lyra"))); string(key2) != string(key) {
		t.Fatal("key file rewritten")
	}
	os.Remove(v.MustPath(IdentityPath("lyra")))
	os.WriteFile(v.MustPath(KeyPath("lyra")), []byte("broken"), 0o600)
	if _, err := Create(v, "lyra", "", time.Now()); !errors.Is(err, ErrKey) {
		t.Fatalf("unusable existing key: %v", err)
	}
	if b, _ := os.ReadFile(v.MustPath(KeyPath("lyra"))); string(b) != "broken" {
		t.Fatal("unusable key file was replaced")
	}
}

func TestLoadMalformedKeepsBody(t *testing.T) {
	v := mustVault(t)
	Create(v, "bob", "", time.Now())
	os.WriteFile(v.MustPath(IdentityPath("bob")), []byte("---\nrole: [unclosed\n---\n# bob\n"), 0o644)
	id, err := Load(v, "bob")
	if !errors.Is(err, ErrMalformed) || id == nil || !strings.Contains(id.Body, "# bob") {
		t.Fatalf("Load = %+v, %v", id, err)
	}
}

// TestNewIdentityHasNoEmptyBullets: a new IDENTITY.md shows a person (in
// Obsidian) and the agent (in its prompt) a word under every heading, not
// an empty "- " bullet, with or without a role.
func TestNewIdentityHasNoEmptyBullets(t *testing.T) {
	v := mustVault(t)
	now := time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC)
	for name, role := range map[string]string{"lyra": "", "ella": "research"} {
		if _, err := Create(v, name, role, now); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(v.MustPath(IdentityPath(name)))
		if err != nil {
			t.Fatal(err)
		}
		_, body, _ := strings.Cut(strings.TrimPrefix(string(data), "---\n"), "\n---\n")
		lines := strings.Split(body, "\n")
		for i, l := range lines {
			if s := strings.TrimSpace(l); s == "-" || s == "*" {
				t.Errorf("%s IDENTITY.md line %d is an empty bullet:\n%s", name, i+1, body)
			}
			if strings.HasPrefix(l, "## ") && (i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) == "") {
				t.Errorf("%s IDENTITY.md: nothing under %q:\n%s", name, l, body)
			}
		}
		want := "(not set)"
		if role != "" {
			want = role
		}
		if !strings.Contains(body, "## Role\n"+want+"\n") {
			t.Errorf("%s: role section:\n%s", name, body)
		}
	}
}
