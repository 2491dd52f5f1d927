package vault

import (
	"context"
	"os"
	"time"
)

// LockNoticeAfter is how long a lock wait runs before it is reported to
// the function set with [Vault.OnLockWait].
const LockNoticeAfter = time.Second

// lockNoticeAfter is [LockNoticeAfter]; tests shorten it.
var lockNoticeAfter = LockNoticeAfter

// LockWaitNotice describes a lock wait that has gone on for
// [LockNoticeAfter]: which lock, who holds it, and how long the wait will
// go on before it gives up.
type LockWaitNotice struct {
	// Name is the lock's name ("agents/lyra/MEMORY.md"); Path its file.
	Name, Path string
	// PID is the holder's process id, 0 when it cannot be known (see
	// [LockTimeoutError]).
	PID int
	// Self is true when the holder is this very process, in another of
	// its operations.
	Self bool
	// Waited is how long it has been waited for so far; Wait the bound
	// (lock_timeout) after which the wait gives up, unless the caller's
	// context ends it sooner.
	Waited, Wait time.Duration
}

// OnLockWait sets fn to be told, once per wait, about a lock wait that has
// lasted [LockNoticeAfter], so that a command line can say whom it waits
// for and how long it will wait. fn runs on the waiting goroutine and
// should return at once; nil stops the notices. It applies to every lock
// taken through v.
func (v *Vault) OnLockWait(fn func(LockWaitNotice)) {
	if fn == nil {
		v.lockWaitFn.Store(nil)
		return
	}
	v.lockWaitFn.Store(&fn)
}

func (v *Vault) lockNotice() func(LockWaitNotice) {
	if fn := v.lockWaitFn.Load(); fn != nil {
		return *fn
	}
	return nil
}

// testHookAwait is told when a goroutine starts (true) and stops (false)
// waiting for another process's lock.
var testHookAwait func(path string, start bool)

// lockWait is one wait for a lock: its bound, and whether it has been
// reported yet.
type lockWait struct {
	name, path string
	bound      time.Duration
	start      time.Time
	notify     func(LockWaitNotice) // nil: nobody listens
	noticed    bool
}

// queue waits for the in-process slot of the lock: until it is free (true)
// or tctx is done (false).
func (w *lockWait) queue(tctx context.Context, slot chan struct{}) bool {
	select {
	case slot <- struct{}{}:
		return true
	default:
	}
	var notice <-chan time.Time
	if w.notify != nil {
		t := time.NewTimer(time.Until(w.start.Add(lockNoticeAfter)))
		defer t.Stop()
		notice = t.C
	}
	for {
		select {
		case slot <- struct{}{}:
			return true
		case <-tctx.Done():
			return false
		case <-notice:
			notice = nil
			w.notice(slotHolder(w.path))
		}
	}
}

// slotHolder names the holder of a lock whose in-process slot is taken:
// the process that holds the lock file — another one, when the goroutine
// holding the slot is itself waiting for it — or else this one.
func slotHolder(path string) (pid int, self bool) {
	if pid := lockHolder(path); pid > 0 {
		return pid, pid == os.Getpid()
	}
	return os.Getpid(), true
}

// noticeDue reports the wait for another process's lock if it has lasted
// long enough and was not reported yet.
func (w *lockWait) noticeDue() {
	if w.notify != nil && !w.noticed && time.Since(w.start) >= lockNoticeAfter {
		w.notice(lockHolder(w.path), false)
	}
}

func (w *lockWait) notice(pid int, self bool) {
	w.noticed = true
	w.notify(LockWaitNotice{Name: w.name, Path: w.path, PID: pid, Self: self, Waited: time.Since(w.start), Wait: w.bound})
}

// until is when the next look at a busy lock is due: delay from now, but
// no later than the notice, if one is still to come.
func (w *lockWait) until(delay time.Duration) time.Time {
	t := time.Now().Add(delay)
	if at := w.start.Add(lockNoticeAfter); w.notify != nil && !w.noticed && at.Before(t) {
		return at
	}
	return t
}

// sleepUntil waits until t or until tctx is done, and reports whether
// tctx is still live.
func sleepUntil(tctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-tctx.Done():
		return false
	}
}
