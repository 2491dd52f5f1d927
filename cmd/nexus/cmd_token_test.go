package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

func TestAgentTokenCommand(t *testing.T) {
	dir := factVault(t)
	nx := func(args ...string) (int, string, string) {
		return factCLI(t, "", append([]string{"--vault", dir}, args...)...)
	}
	code, out, errOut := nx("agent", "token", "lyra")
	token := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(token, identity.TokenPrefix) || !strings.Contains(errOut, "shown once") {
		t.Fatalf("agent token: code %d, out %q, err %q", code, out, errOut)
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, ".nexus", "config.yaml"))
	if strings.Contains(string(cfg), token) || !strings.Contains(string(cfg), identity.HashToken(token)) {
		t.Fatalf("config must hold the hash, not the token:\n%s", cfg)
	}
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a, err := identity.AgentForToken(v, token); err != nil || a != "lyra" {
		t.Fatalf("token does not map to lyra: %q %v", a, err)
	}

	code, _, errOut = nx("agent", "token", "lyra")
	if code != exitRefused || !strings.Contains(errOut, "--rotate") {
		t.Errorf("second token without --rotate: code %d, %q", code, errOut)
	}
	code, out, _ = nx("--json", "agent", "token", "lyra", "--rotate")
	var res struct {
		Agent   string `json:"agent"`
		Token   string `json:"token"`
		Rotated bool   `json:"rotated"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Agent != "lyra" || !res.Rotated || res.Token == token || !strings.HasPrefix(res.Token, identity.TokenPrefix) {
		t.Fatalf("--json --rotate: code %d, %q", code, out)
	}
	if _, err := identity.AgentForToken(v, token); err == nil {
		t.Error("old token still works after --rotate")
	}

	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"agent", "token"}, exitUsage},
		{[]string{"agent", "token", "ghost"}, exitRefused},
		{[]string{"agent", "token", "../lyra"}, exitUsage},
	} {
		if code, _, errOut := nx(tt.args...); code != tt.code {
			t.Errorf("%v: code %d, want %d (%s)", tt.args, code, tt.code, errOut)
		}
	}
	if code, out, _ := nx("agent", "token", "--help"); code != 0 || !strings.Contains(out, "Example") {
		t.Errorf("help: %d %q", code, out)
	}
}
