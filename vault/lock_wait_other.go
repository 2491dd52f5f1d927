//go:build !linux

package vault

import (
	"context"
	"time"

	"github.com/gofrs/flock"
)

// A wait for a lock that another process holds looks at it again and
// again, at first every lockPollMin, then less often, up to lockPollMax:
// a blocking flock cannot be cancelled, and a wait that gave up would
// leave a thread blocked in the kernel for as long as the holder hangs.
// (Linux is woken by the holder's close instead: lock_wait_linux.go.)
const (
	lockPollMin = time.Millisecond
	lockPollMax = 25 * time.Millisecond
)

// awaitFlock waits, until tctx is done, for the lock file that another
// process holds. It returns the function that releases the lock once
// taken (and a cleanup, which here has nothing to do), or nil if tctx
// ended the wait first; either way nothing is left waiting or open.
func (w *lockWait) awaitFlock(tctx context.Context) (release, cleanup func(), err error) {
	fl := flock.New(w.path)
	if testHookAwait != nil {
		testHookAwait(w.path, true)
		defer testHookAwait(w.path, false)
	}
	for delay := lockPollMin; ; delay = min(2*delay, lockPollMax) {
		ok, err := fl.TryLock()
		if err != nil {
			return nil, nil, err
		}
		if ok {
			return func() { fl.Unlock(); fl.Close() }, func() {}, nil
		}
		w.noticeDue()
		if !sleepUntil(tctx, w.until(delay)) {
			fl.Close()
			return nil, nil, nil
		}
	}
}
