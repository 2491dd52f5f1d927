package identity_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

func mustVaultWithAgents(t *testing.T, names ...string) *vault.Vault {
	t.Helper()
	v, _, err := vault.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if _, err := agents.Add(v, n, "", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

func TestTokenLifecycle(t *testing.T) {
	v := mustVaultWithAgents(t, "lyra", "ella")
	tc := identity.NewTokenChecker(v)

	lyra, err := identity.NewToken(v, "lyra", false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(lyra, identity.TokenPrefix) || len(lyra) < 40 {
		t.Fatalf("token %q looks weak", lyra)
	}
	cfg, _ := os.ReadFile(v.MustPath(vault.ConfigFile))
	if strings.Contains(string(cfg), lyra) {
		t.Fatal("config stores the token itself")
	}
	if !strings.Contains(string(cfg), identity.HashToken(lyra)) {
		t.Fatalf("config lacks the token hash:\n%s", cfg)
	}
	if !strings.Contains(string(cfg), "# Bounded memory limits") {
		t.Fatal("config comments were lost")
	}
	ella, err := identity.NewToken(v, "ella", false)
	if err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		token, want string
		ok          bool
	}{
		{lyra, "lyra", true},
		{ella, "ella", true},
		{"", "", false},
		{lyra + "x", "", false},
		{identity.HashToken(lyra), "", false}, // the stored hash is not a token
		{strings.Repeat("a", 10000), "", false},
	} {
		got, err := tc.Check(tt.token)
		if tt.ok != (err == nil) || got != tt.want {
			t.Errorf("Check(%.20q) = %q, %v; want %q ok=%v", tt.token, got, err, tt.want, tt.ok)
		}
		if !tt.ok && !errors.Is(err, identity.ErrBadToken) {
			t.Errorf("Check(%.20q) error %v, want ErrBadToken", tt.token, err)
		}
	}

	if _, err := identity.NewToken(v, "lyra", false); !errors.Is(err, identity.ErrTokenExists) {
		t.Fatalf("second token without rotate: %v, want ErrTokenExists", err)
	}
	rotated, err := identity.NewToken(v, "lyra", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tc.Check(lyra); !errors.Is(err, identity.ErrBadToken) {
		t.Fatalf("old token still accepted after rotation: %v", err)
	}
	if got, err := tc.Check(rotated); err != nil || got != "lyra" {
		t.Fatalf("rotated token: %q %v", got, err)
	}
	if got, err := identity.AgentForToken(v, ella); err != nil || got != "ella" {
		t.Fatalf("AgentForToken: %q %v", got, err)
	}
}

func TestNewTokenUnknownAgent(t *testing.T) {
	v := mustVaultWithAgents(t)
	for _, name := range []string{"ghost", "../x", ""} {
		if _, err := identity.NewToken(v, name, false); err == nil {
			t.Errorf("NewToken(%q) succeeded", name)
		}
	}
	cfg, _ := os.ReadFile(v.MustPath(vault.ConfigFile))
	if strings.Contains(string(cfg), "token_sha256") {
		t.Fatal("config changed for an unknown agent")
	}
}
