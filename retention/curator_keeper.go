package retention

import (
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

// curatorCheckEvery is how often a keeper looks whether a pass is due.
const curatorCheckEvery = time.Minute

// keeperCurator is a keeper's curator timing.
type keeperCurator struct {
	mu   sync.Mutex
	next time.Time // wall clock of the next look
}

// curate runs an automatic curator pass when one is due and the vault has
// been idle (no write to memory, facts, review or the live log) for
// curator idle_seconds: never during a burst of writes.
func (k *Keeper) curate() {
	cfg := k.v.Config().Curator
	if cfg.Off {
		return
	}
	k.cur.mu.Lock()
	if time.Now().Before(k.cur.next) {
		k.cur.mu.Unlock()
		return
	}
	k.cur.next = time.Now().Add(curatorCheckEvery)
	k.cur.mu.Unlock()
	if quiet := time.Since(lastWrite(k.v)); quiet < cfg.Idle() {
		return
	}
	res, err := RunCurator(k.v, PassOptions{Now: k.opts.Now(), Auto: true})
	if err != nil {
		k.opts.Logger.Warn("curator pass", "err", err)
		return
	}
	if res.Ran {
		k.opts.Logger.Info("curator pass", "pass", res.ID, "proposals", len(res.Proposals), "diary", res.Diary)
	}
}

// lastWrite is the newest modification time among the files and folders
// agents and people write: bounded memory, fact folders, pending review
// items and this month's live-log feeds.
func lastWrite(v *vault.Vault) time.Time {
	var last time.Time
	see := func(p string) {
		if st, err := os.Stat(p); err == nil && st.ModTime().After(last) {
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
	if des, err := os.ReadDir(live); err == nil {
		for _, de := range des {
			see(filepath.Join(live, de.Name()))
		}
	}
	return last
}
