package retention

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// The keeper ends every run with KeeperOptions.After (where 'nexus watch'
// and 'nexus serve' run the curator), with the run's time, in RunOnce's
// caller as in its own loop.
func TestKeeperRunsAfter(t *testing.T) {
	v := mustVault(t)
	ran := make(chan time.Time, 4)
	k := StartKeeper(context.Background(), v, KeeperOptions{
		Every: time.Hour,
		Now:   func() time.Time { return t0 },
		After: func(got *vault.Vault, now time.Time, log *slog.Logger) {
			if got != v || log == nil {
				t.Errorf("After got vault %p and logger %v, want %p and a logger", got, log, v)
			}
			ran <- now
		},
	})
	defer k.Close()
	if now := <-ran; !now.Equal(t0) { // the run StartKeeper makes at once
		t.Errorf("After ran with %v, want the keeper's clock %v", now, t0)
	}
	k.RunOnce()
	if len(ran) == 0 {
		t.Error("RunOnce did not run After")
	}
}
