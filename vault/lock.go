package vault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// DefaultLockTimeout is how long a lock is waited for before the wait gives
// up with a [*LockTimeoutError] (lock_timeout in .nexus/config.yaml).
// Nexus holds most locks for milliseconds (one fsynced append, one memory
// write); the longest holds are seconds (approving a few hundred review
// items in one go, the swap at the end of an index rebuild, a curator
// pass). Thirty seconds is well above those on a loaded machine and short
// enough that a person or a runtime hook waiting behind a hung process is
// told so, with its PID, before giving up on the command.
const DefaultLockTimeout = 30 * time.Second

// IsReadOnly reports whether err says that this process may not write
// where it tried to: [ErrReadOnly], a permission error, a read-only file
// system, or a file where a folder was needed.
func IsReadOnly(err error) bool {
	return errors.Is(err, ErrReadOnly) || errors.Is(err, fs.ErrPermission) ||
		errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.ENOTDIR)
}

// LockTimeoutError is returned when a lock stays held by another process
// (or another goroutine of this one) for the whole bound. It says which
// process, when the system tells (Linux: the kernel's lock table; macOS
// and other Unixes: every holder writes its PID into the lock file), and
// what to do.
type LockTimeoutError struct {
	// Name is the lock's name ("livelog-live-lyra@vps"); Path its file.
	Name, Path string
	// Wait is how long it was waited for.
	Wait time.Duration
	// PID is the holder's process id, 0 when it cannot be known (Windows,
	// or a holder that recorded none).
	PID int
	// Self is true when the holder is this very process.
	Self bool
}

func (e *LockTimeoutError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lock %s was not free within %s: ", e.Name, e.Wait)
	switch {
	case e.Self:
		fmt.Fprintf(&b, "this process (PID %d) holds it itself, in another of its operations", e.PID)
	case e.PID > 0:
		fmt.Fprintf(&b, "process %d holds it", e.PID)
	default:
		b.WriteString("another process holds it")
	}
	b.WriteString(". Nexus holds a lock for milliseconds (seconds for a bulk review or an index rebuild), so a holder that keeps it this long is probably hung")
	switch {
	case e.Self:
		b.WriteString("; stop this process and run the command again")
	case e.PID > 0 && runtime.GOOS == "windows":
		fmt.Fprintf(&b, ": if it is, stop it (taskkill /PID %d) and run the command again", e.PID)
	case e.PID > 0:
		fmt.Fprintf(&b, ": check it (ps -p %d) and, if it is hung, stop it (kill %d), then run the command again", e.PID, e.PID)
	case runtime.GOOS == "windows":
		fmt.Fprintf(&b, ": find it (Resource Monitor, CPU tab, Associated Handles: %s), stop it, and run the command again", e.Path)
	default:
		fmt.Fprintf(&b, ": find it (fuser -v %s, or lsof), stop it if it is hung, and run the command again", e.Path)
	}
	b.WriteString("; if it is busy with long work, wait, or raise lock_timeout in .nexus/config.yaml")
	return b.String()
}

// Is makes errors.Is(err, ErrLockTimeout) hold.
func (e *LockTimeoutError) Is(target error) bool { return target == ErrLockTimeout }

// inproc serialises lockers inside one process. flock alone would do on
// Linux, but the race detector doesn't know about file locking, and on some
// platforms two handles in one process do not exclude each other. Each
// value is a channel of capacity one: holding the lock is holding its slot,
// so a wait can end at a deadline. Only the goroutine that holds the slot
// touches the lock file, so at most one goroutine per path ever waits for
// another process; the others queue on the slot.
var inproc sync.Map // lock file path -> chan struct{}

// Lock takes the cross-process lock called name (for example
// "agents/lyra/MEMORY.md" or "livelog"), waiting at most the vault's
// lock_timeout ([DefaultLockTimeout]) for it. It returns the function that
// releases it. Locks are advisory flock(2) locks (LockFileEx on Windows) on
// files under .nexus/state/locks/; the kernel drops them when a process
// dies, so a crash never leaves a stale lock. A wait that gives up says
// who holds the lock: on Linux the kernel's lock table (/proc/locks) names
// the holder; on other Unixes (and a Linux without /proc) a process keeps
// its PID in the lock file while it holds the lock. Windows names no PID.
// A wait longer than [LockNoticeAfter] is reported to the function set
// with [Vault.OnLockWait].
func (v *Vault) Lock(name string) (unlock func(), err error) {
	return v.LockContext(context.Background(), name)
}

// LockContext is [Vault.Lock] that also gives up when ctx is done. A wait
// that reaches the vault's lock_timeout returns a [*LockTimeoutError]; one
// ended by ctx returns ctx's error. A lock that cannot be taken because
// the lock folder or file may not be written returns an error wrapping
// [ErrReadOnly]. A wait that gives up leaves nothing behind: no goroutine
// is left waiting for the lock, no file open.
func (v *Vault) LockContext(ctx context.Context, name string) (unlock func(), err error) {
	path := v.LockPath(name)
	w := &lockWait{name: name, path: path, bound: v.Config().LockWait(), start: time.Now(), notify: v.lockNotice()}
	tctx, cancel := context.WithTimeout(ctx, w.bound)
	defer cancel()
	timedOut := func(pid int, self bool) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("lock %s: %w", name, err)
		}
		return &LockTimeoutError{Name: name, Path: path, Wait: w.bound, PID: pid, Self: self}
	}

	slotAny, _ := inproc.LoadOrStore(path, make(chan struct{}, 1))
	slot := slotAny.(chan struct{})
	if !w.queue(tctx, slot) {
		return nil, timedOut(slotHolder(path))
	}
	release := func() { <-slot }

	// Mode 0600 (flock's default): other users cannot take, and so cannot
	// hold up, this vault's locks; their reads need none (docs/operations.md).
	// The lock folder is made when the first lock finds it missing.
	// The lock file is opened by path (flock's API): a lock file that is
	// a symlink is refused first, and what flock opened is checked to be
	// the file the vault's root reaches there (a link swapped in between
	// is refused, and its target is never held locked).
	if st, err := Lstat(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		release()
		return nil, lockOpenError(name, err)
	} else if err == nil && st.Mode()&fs.ModeSymlink != 0 {
		release()
		return nil, lockOpenError(name, fmt.Errorf("%s is a symlink: %w", filepath.Base(path), ErrUnsafePath))
	}
	fl := flock.New(path)
	ok, err := fl.TryLock()
	if errors.Is(err, fs.ErrNotExist) {
		if err = MkdirAll(filepath.Dir(path), 0o755); err == nil {
			fl = flock.New(path)
			ok, err = fl.TryLock()
		}
	}
	if err == nil && ok {
		// flock opened the file by path: make sure what it locked is the
		// file the vault's root reaches there, not one a link swapped in
		// meanwhile led to (outside the vault, say).
		if err = sameFile(fl, path); err != nil {
			fl.Unlock()
			fl.Close()
		}
	}
	if err != nil {
		release()
		return nil, lockOpenError(name, err)
	}
	letGo, cleanup := func() { fl.Unlock(); fl.Close() }, func() {}
	if !ok {
		// Held by another process: this goroutine, holding the slot, is
		// the only one of this process that waits for it (awaitFlock).
		fl.Close()
		held, after, err := w.awaitFlock(tctx)
		if err != nil {
			release()
			return nil, lockOpenError(name, err)
		}
		if held == nil {
			release()
			return nil, timedOut(lockHolder(path), false)
		}
		letGo, cleanup = held, after
	}
	var pid holderRecord
	if !kernelNamesHolders() {
		pid = recordHolder(path)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pid.clear()
			letGo()
			release()
			cleanup()
		})
	}, nil
}

// sameFile reports an error unless the file fl holds open is the one at
// path inside the vault (no symlink: a lock file is never one).
func sameFile(fl *flock.Flock, path string) error {
	held, err := fl.Stat()
	if err != nil {
		return err
	}
	there, err := Lstat(path)
	if err != nil {
		return err
	}
	if !os.SameFile(held, there) {
		return fmt.Errorf("%s was replaced while it was opened: %w", filepath.Base(path), ErrUnsafePath)
	}
	return nil
}

// lockOpenError wraps an error opening or creating a lock file, marking
// those that mean "may not write here" with [ErrReadOnly].
func lockOpenError(name string, err error) error {
	if IsReadOnly(err) {
		return fmt.Errorf("lock %s: %w (%w)", name, err, ErrReadOnly)
	}
	return fmt.Errorf("lock %s: %w", name, err)
}

var lockNameReplacer = strings.NewReplacer("/", "~", `\`, "~", ":", "_", "..", "_")

// LockPath returns the lock file used for name.
func (v *Vault) LockPath(name string) string {
	safe := lockNameReplacer.Replace(name)
	return filepath.Join(v.root, filepath.FromSlash(LocksDir), safe+".lock")
}

// LockFile takes an flock on an existing file that is not one of Nexus's
// own lock files — another program's lock, such as Hermes Agent's
// MEMORY.md.lock — with the same bound as [Vault.Lock]. It neither creates
// nor writes the file. what names it in errors.
func (v *Vault) LockFile(path, what string) (unlock func(), err error) {
	wait := v.Config().LockWait()
	fl := flock.New(path, flock.SetFlag(os.O_RDONLY))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ok, err := fl.TryLockContext(ctx, 5*time.Millisecond)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, lockOpenError(what, err)
	}
	if !ok {
		fl.Close()
		return nil, &LockTimeoutError{Name: what, Path: path, Wait: wait, PID: procLocksHolder(path)}
	}
	return func() { fl.Unlock(); fl.Close() }, nil
}

// pidWidth is the width of the PID record in a lock file: the PID,
// space-padded, then a newline. A fixed width lets the holder write and
// clear it in place, without truncating.
const pidWidth = 11

// procLocks is whether this system's kernel names the holder of a lock
// (Linux's /proc/locks), found out once per process.
var procLocks struct {
	once sync.Once
	ok   bool
}

// kernelNamesHolders reports whether the kernel names lock holders, so
// that a PID record in the lock file is not needed: writing it costs an
// open and two writes per lock, which an append takes several of.
//
// It does not read /proc/locks to find out: a read of it takes the
// kernel's file-lock semaphore for writing, which waits for an RCU grace
// period (about 10 ms, measured, on the first read in a while) and holds
// up every flock on the machine meanwhile — a tax on every short-lived
// command, paid only to name a holder in an error nobody may see. It asks
// the cheap question instead (see [procNamesUs]); /proc/locks is read only
// when a holder must be named.
func kernelNamesHolders() bool {
	procLocks.once.Do(func() { procLocks.ok = procNamesUs() })
	return procLocks.ok
}

// holderRecord is a held lock's PID record; clear blanks it.
type holderRecord struct{ f *os.File }

// recordHolder writes this process's PID into the lock file at path, which
// it now holds. It is best effort: a lock works without it.
func recordHolder(path string) holderRecord {
	if runtime.GOOS == "windows" {
		return holderRecord{} // the locked byte cannot be read by others anyway
	}
	f, err := OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return holderRecord{}
	}
	rec := fmt.Sprintf("%-*d\n", pidWidth-1, os.Getpid())
	if _, err := f.WriteAt([]byte(rec), 0); err != nil {
		f.Close()
		return holderRecord{}
	}
	return holderRecord{f}
}

func (r holderRecord) clear() {
	if r.f == nil {
		return
	}
	r.f.WriteAt([]byte(strings.Repeat(" ", pidWidth-1)+"\n"), 0)
	r.f.Close()
}

// lockHolder returns the PID of the process holding the lock file at path,
// or 0 if it cannot tell: the kernel's own record where there is one
// (/proc/locks on Linux), else the PID the holder wrote into the file, if
// that process is still alive.
func lockHolder(path string) int {
	if pid := procLocksHolder(path); pid > 0 {
		return pid
	}
	data, err := ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 || !processAlive(pid) {
		return 0
	}
	return pid
}
