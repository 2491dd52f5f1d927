package vault

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// A wait for a lock that another process holds is woken by the close of
// the holder's lock file (inotify), which Nexus's unlock and a holder's
// death both do, so the lock changes hands at once, as with a blocking
// flock. A blocking flock cannot be cancelled: a wait that gave up would
// leave a thread blocked in the kernel for as long as the holder hangs,
// one per call. The look at the lock every lockBackstop (and at first
// more often) catches a release that closes nothing (another program
// that unlocks and keeps its file open), and serves where inotify is not
// available (no instance left: fs.inotify.max_user_instances).
const (
	lockPollMin  = time.Millisecond
	lockBackstop = 100 * time.Millisecond
)

// awaitFlock waits, until tctx is done, for the lock file that another
// process holds. It returns the function that releases the lock once
// taken, and one to call after that, or nil if tctx ended the wait first;
// either way nothing is left waiting, open or watching once they ran.
//
// Closing an inotify instance waits for the kernel (an RCU grace period:
// 0.1 to 5 ms, measured), so it is done in cleanup, once the lock and its
// in-process slot are free again, not while the lock is held.
func (w *lockWait) awaitFlock(tctx context.Context) (release, cleanup func(), err error) {
	f, err := OpenFile(w.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, err
	}
	wake := watchCloses(w.path)
	cleanup = func() {}
	if wake != nil {
		cleanup = func() { wake.Close() }
	}
	if testHookAwait != nil {
		testHookAwait(w.path, true)
		defer testHookAwait(w.path, false)
	}
	buf := make([]byte, 4096)
	for delay := lockPollMin; ; delay = min(2*delay, lockBackstop) {
		ok, err := tryFlock(f)
		if err != nil {
			f.Close()
			cleanup()
			return nil, nil, err
		}
		if ok {
			return func() { unflock(f); f.Close() }, cleanup, nil
		}
		w.noticeDue()
		live := true
		if wake != nil {
			// No goroutine watches tctx: it has a deadline, the wait's
			// bound; a caller's cancel is seen at the next look.
			until := w.until(delay)
			if d, ok := tctx.Deadline(); ok && d.Before(until) {
				until = d
			}
			wake.SetReadDeadline(until)
			wake.Read(buf) // a close of the lock file, or the deadline
			live = tctx.Err() == nil
		} else {
			live = sleepUntil(tctx, w.until(delay))
		}
		if !live {
			f.Close()
			cleanup()
			return nil, nil, nil
		}
	}
}

// watchCloses returns an inotify instance that becomes readable when a
// handle of the file at path is closed, or nil if there is none to be
// had. Its reads honour deadlines.
func watchCloses(path string) *os.File {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	if _, err := syscall.InotifyAddWatch(fd, path, syscall.IN_CLOSE_WRITE|syscall.IN_CLOSE_NOWRITE|syscall.IN_DELETE_SELF); err != nil {
		syscall.Close(fd)
		return nil
	}
	f := os.NewFile(uintptr(fd), "inotify")
	if f.SetReadDeadline(time.Time{}) != nil { // not in the poller: no deadlines
		f.Close()
		return nil
	}
	return f
}

// tryFlock takes an exclusive flock on f if it is free.
func tryFlock(f *os.File) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB)
			if ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return false, err
	}
	if errors.Is(ferr, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return ferr == nil, ferr
}

func unflock(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { syscall.Flock(int(fd), syscall.LOCK_UN) })
	}
}
