//go:build !windows

package retention

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKeeperPassesOverSymlinks: a keeper run (the one 'nexus serve' and
// 'nexus watch' make at start, and on every restart) neither panics nor
// writes outside the vault when a vault path is a link out of it — the
// issue-30 panic was `ln -s /etc/hostname agents/lyra/MEMORY.md`.
func TestKeeperPassesOverSymlinks(t *testing.T) {
	for _, rel := range []string{
		"agents/lyra/MEMORY.md", "agents/lyra/USER.md", "agents/lyra/IDENTITY.md",
		"agents/lyra/memory", "agents/lyra/memory/INDEX.md", "agents/lyra",
		"review", "review/pending", "log/live", ".nexus/state",
	} {
		for _, target := range []string{"file", "folder", "/"} {
			t.Run(rel+"→"+target, func(t *testing.T) {
				v := mustVault(t)
				outside := t.TempDir()
				secret := filepath.Join(outside, "secret")
				if err := os.WriteFile(secret, []byte("outside"), 0o644); err != nil {
					t.Fatal(err)
				}
				to := map[string]string{"file": secret, "folder": outside, "/": "/"}[target]
				link := v.MustPath(rel)
				os.RemoveAll(link)
				os.MkdirAll(filepath.Dir(link), 0o755)
				if err := os.Symlink(to, link); err != nil {
					t.Fatal(err)
				}
				var logs bytes.Buffer
				k := &Keeper{v: v, opts: KeeperOptions{Now: func() time.Time { return t0 }, Logger: slog.New(slog.NewTextHandler(&logs, nil))}}
				k.RunOnce() // a panic fails the test
				ents, _ := os.ReadDir(outside)
				if got, _ := os.ReadFile(secret); string(got) != "outside" || len(ents) != 1 {
					t.Errorf("the keeper wrote outside the vault: secret %q, %d entries", got, len(ents))
				}
				if strings.Contains(logs.String(), "panic") {
					t.Errorf("keeper log: %s", logs.String())
				}
			})
		}
	}
}
