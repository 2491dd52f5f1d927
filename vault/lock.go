package vault

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// inproc serialises lockers inside one process. flock alone would do on
// Linux, but the race detector doesn't know about file locking, and on some
// platforms two handles in one process do not exclude each other.
var inproc sync.Map // lock file path -> *sync.Mutex

// Lock takes the cross-process lock called name (for example
// "agents/lyra/MEMORY.md" or "livelog"), blocking until it is free. It
// returns the function that releases it. Locks are advisory flock(2) locks
// (LockFileEx on Windows) on files under .nexus/state/locks/; the kernel
// drops them when a process dies, so a crash never leaves a stale lock.
func (v *Vault) Lock(name string) (unlock func(), err error) {
	return v.LockContext(context.Background(), name)
}

// LockContext is [Vault.Lock] that gives up when ctx is done.
func (v *Vault) LockContext(ctx context.Context, name string) (unlock func(), err error) {
	path := v.LockPath(name)
	muAny, _ := inproc.LoadOrStore(path, new(sync.Mutex))
	mu := muAny.(*sync.Mutex)
	if ctx.Done() == nil {
		mu.Lock()
	} else {
		for !mu.TryLock() {
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("lock %s: %w", name, ctx.Err())
			case <-time.After(time.Millisecond):
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		mu.Unlock()
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	fl := flock.New(path)
	if ctx.Done() == nil {
		err = fl.Lock()
	} else {
		var ok bool
		ok, err = fl.TryLockContext(ctx, 2*time.Millisecond)
		if err == nil && !ok {
			err = ctx.Err()
		}
	}
	if err != nil {
		mu.Unlock()
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			fl.Unlock()
			fl.Close()
			mu.Unlock()
		})
	}, nil
}

// LockPath returns the lock file used for name.
func (v *Vault) LockPath(name string) string {
	safe := strings.NewReplacer("/", "~", `\`, "~", ":", "_", "..", "_").Replace(name)
	return filepath.Join(v.root, filepath.FromSlash(LocksDir), safe+".lock")
}
