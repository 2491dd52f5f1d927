package curator

import (
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

// checkEvery is how often a keeper looks whether a pass is due.
const checkEvery = time.Minute

// Auto runs the curator's automatic passes for a keeper: 'nexus watch' and
// 'nexus serve' start theirs with [retention.KeeperOptions.After] set to
// an Auto's [Auto.Run]. The zero value is ready; it is safe for concurrent
// use.
type Auto struct {
	mu   sync.Mutex
	next time.Time // wall clock of the next look
}

// Run runs an automatic curator pass at now when one is due and the vault
// has been idle (no write to memory, facts, review or the live log) for
// curator idle_seconds: never during a burst of writes. It looks at most
// once a minute; what it did, or why it failed, goes to log.
func (a *Auto) Run(v *vault.Vault, now time.Time, log *slog.Logger) {
	cfg := v.Config().Curator
	if cfg.Off {
		return
	}
	a.mu.Lock()
	if time.Now().Before(a.next) {
		a.mu.Unlock()
		return
	}
	a.next = time.Now().Add(checkEvery)
	a.mu.Unlock()
	if quiet := time.Since(lastWrite(v)); quiet < cfg.Idle() {
		return
	}
	res, err := Run(v, PassOptions{Now: now, Auto: true})
	if err != nil {
		log.Warn("curator pass", "err", err)
		return
	}
	if res.Ran {
		log.Info("curator pass", "pass", res.ID, "proposals", len(res.Proposals), "diary", res.Diary)
	}
}

// lastWrite is the newest modification time among the files and folders
// agents and people write: bounded memory, fact folders, pending review
// items and this month's live-log feeds.
func lastWrite(v *vault.Vault) time.Time {
	var last time.Time
	see := func(p string) {
		if st, err := vault.Stat(p); err == nil && st.ModTime().After(last) {
			last = st.ModTime()
		}
	}
	names, _ := identity.List(v)
	for _, a := range names {
		see(v.MustPath(agents.HomePath(a, agents.MemoryFile)))
		see(v.MustPath(agents.HomePath(a, agents.UserFile)))
		see(v.MustPath(agents.HomePath(a, agents.FactsDir)))
	}
	see(v.MustPath(vault.PendingDir))
	live := v.MustPath(vault.LiveLogDir + "/" + time.Now().UTC().Format("2006-01"))
	see(live)
	if des, err := vault.ReadDir(live); err == nil {
		for _, de := range des {
			see(filepath.Join(live, de.Name()))
		}
	}
	return last
}
