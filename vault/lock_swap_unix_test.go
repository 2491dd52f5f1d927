//go:build unix

package vault

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
)

// TestLockNeverHoldsAFileALinkSwappedIn: while a goroutine keeps turning
// a lock file into a symlink to a file outside the vault and back, every
// lock taken holds the file inside, never the one outside: a lock either
// fails (the link was there) or holds the vault's own file.
func TestLockNeverHoldsAFileALinkSwappedIn(t *testing.T) {
	v := mustInit(t)
	outside := filepath.Join(t.TempDir(), "outside.lock")
	if err := os.WriteFile(outside, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	path := v.LockPath("swapped")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		tmp := path + ".link"
		for i := 0; !stop.Load(); i++ {
			if i%2 == 0 {
				os.Remove(tmp)
				os.Symlink(outside, tmp)
			} else {
				os.Remove(tmp)
				os.WriteFile(tmp, nil, 0o600)
			}
			os.Rename(tmp, path)
		}
	}()
	out, err := os.Open(outside)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	held, refused := 0, 0
	for range 300 {
		unlock, err := v.Lock("swapped")
		if err != nil {
			if !errors.Is(err, ErrUnsafePath) {
				stop.Store(true)
				<-done
				t.Fatalf("lock: %v", err)
			}
			refused++
			continue
		}
		held++
		// The outside file must be free: a lock on it would fail here.
		if err := syscall.Flock(int(out.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			unlock()
			stop.Store(true)
			<-done
			t.Fatalf("a lock of the vault holds the file outside it: %v", err)
		}
		syscall.Flock(int(out.Fd()), syscall.LOCK_UN)
		unlock()
	}
	stop.Store(true)
	<-done
	if held == 0 || refused == 0 {
		t.Logf("held %d, refused %d", held, refused)
	}
}
