package mcpserver

import (
	"os"
	"sync"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// liveVault hands out the vault with its configuration as it is now on
// disk: when a person edits .nexus/config.yaml (limits, the review gate)
// while the server runs, the next call sees the change.
type liveVault struct {
	path string // .nexus/config.yaml

	mu    sync.Mutex // protects v and stamp
	v     *vault.Vault
	stamp configStamp
}

type configStamp struct {
	info  os.FileInfo
	size  int64
	mtime time.Time
}

func newLiveVault(v *vault.Vault) *liveVault {
	lv := &liveVault{path: v.MustPath(vault.ConfigFile), v: v}
	if st, err := vault.Stat(lv.path); err == nil {
		lv.stamp = configStamp{st, st.Size(), st.ModTime()}
	}
	return lv
}

// get returns the vault, re-reading the config if the file changed. A
// config that does not parse is reported once and the last good one kept.
func (lv *liveVault) get(warn func(error)) *vault.Vault {
	st, err := vault.Stat(lv.path)
	lv.mu.Lock()
	defer lv.mu.Unlock()
	if err != nil {
		return lv.v
	}
	old := lv.stamp
	if old.info != nil && os.SameFile(old.info, st) && old.size == st.Size() && old.mtime.Equal(st.ModTime()) {
		return lv.v
	}
	lv.stamp = configStamp{st, st.Size(), st.ModTime()}
	fresh, err := vault.Open(lv.v.Root())
	if err != nil {
		warn(err)
		return lv.v
	}
	lv.v = fresh
	return fresh
}

// vault returns the served vault with its current configuration.
func (s *Server) vault() *vault.Vault {
	return s.live.get(func(err error) { s.log.Warn("config changed but does not load; keeping the previous one", "err", err) })
}
