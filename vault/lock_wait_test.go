package vault

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// holdChild is the child process of the lock wait tests: it takes the
// lock name, says "held", lets go when a line "release" (or the end of its
// input) comes, says "released", and exits at the end of its input.
func holdChild(dir, name string) error {
	v, err := Open(dir)
	if err != nil {
		return err
	}
	unlock, err := v.Lock(name)
	if err != nil {
		return err
	}
	os.Stdout.WriteString("held\n")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() && in.Text() != "release" {
	}
	unlock()
	os.Stdout.WriteString("released\n")
	io.Copy(io.Discard, os.Stdin)
	return nil
}

// holder is a child process holding a lock of a vault.
type holder struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// holdInChild starts a child process that takes the lock name of v and
// returns once it holds it. The child exits when the test ends.
func holdInChild(t *testing.T, v *Vault, name string) *holder {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "NEXUS_LOCK_HOLD_VAULT="+v.Root(), "NEXUS_LOCK_HOLD_NAME="+name)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &holder{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	h.expect(t, "held")
	return h
}

func (h *holder) expect(t *testing.T, line string) {
	t.Helper()
	if !h.out.Scan() || h.out.Text() != line {
		t.Fatalf("child said %q (%v), want %q", h.out.Text(), h.out.Err(), line)
	}
}

// release makes the child let go of its lock and returns once it has.
func (h *holder) release(t *testing.T) {
	t.Helper()
	io.WriteString(h.in, "release\n")
	h.expect(t, "released")
}

// TestLockWaitLeaksNothing: a wait for a lock that another process keeps
// gives up at the bound, names the holder, and leaves nothing behind — no
// goroutine waiting on in flock, no file open — however often it is
// tried, as a server facing a hung holder would.
func TestLockWaitLeaksNothing(t *testing.T) {
	v := mustInit(t)
	v.config.Store(&Config{LockTimeout: "20ms"})
	h := holdInChild(t, v, "hung")

	goroutines, fds := runtime.NumGoroutine(), openFiles()
	for range 5 {
		_, err := v.Lock("hung")
		var te *LockTimeoutError
		if !errors.As(err, &te) || te.Self {
			t.Fatalf("err = %v, want a timeout naming another process", err)
		}
		if runtime.GOOS != "windows" && te.PID != h.cmd.Process.Pid {
			t.Fatalf("holder named as %d, want the child %d", te.PID, h.cmd.Process.Pid)
		}
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Fatalf("%d goroutines after the waits gave up, %d before:\n%s", n, goroutines, stacks())
	}
	if s := stacks(); strings.Contains(s, "flock") || strings.Contains(s, "awaitFlock") {
		t.Fatalf("a goroutine still waits for the lock:\n%s", s)
	}
	if n := openFiles(); n > fds {
		t.Fatalf("%d files open after the waits gave up, %d before", n, fds)
	}

	// Once the holder lets go, the lock is taken.
	h.release(t)
	unlock, err := v.Lock("hung")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
}

// TestLockOneWaiterPerPath: callers of one process that want a lock
// another process holds queue among themselves; only one of them at a
// time waits for the other process.
func TestLockOneWaiterPerPath(t *testing.T) {
	v := mustInit(t)
	v.config.Store(&Config{LockTimeout: "50ms"})
	h := holdInChild(t, v, "busy")
	var (
		mu            sync.Mutex
		waiting, most int
	)
	testHookAwait = func(path string, start bool) {
		mu.Lock()
		defer mu.Unlock()
		if start {
			waiting++
			most = max(most, waiting)
		} else {
			waiting--
		}
	}
	t.Cleanup(func() { testHookAwait = nil })

	const callers = 4
	errs := make(chan error, callers)
	for range callers {
		go func() {
			_, err := v.Lock("busy")
			errs <- err
		}()
	}
	for range callers {
		err := <-errs
		var te *LockTimeoutError
		if !errors.As(err, &te) {
			t.Fatalf("err = %v, want a timeout", err)
		}
		// Those that queued behind the waiter of this process are told
		// who holds the lock file, not that this process holds it.
		if runtime.GOOS == "linux" && (te.Self || te.PID != h.cmd.Process.Pid) {
			t.Errorf("holder named as %d (self %v), want the child %d", te.PID, te.Self, h.cmd.Process.Pid)
		}
	}
	if most != 1 {
		t.Fatalf("%d goroutines waited for the other process at once, want 1", most)
	}
}

// TestLockHandedOver: a wait for a lock another process holds ends with
// the lock once the holder lets go.
func TestLockHandedOver(t *testing.T) {
	v := mustInit(t)
	h := holdInChild(t, v, "handover")
	waiting := make(chan struct{})
	var once sync.Once
	testHookAwait = func(string, bool) { once.Do(func() { close(waiting) }) }
	t.Cleanup(func() { testHookAwait = nil })

	got := make(chan error, 1)
	go func() {
		unlock, err := v.Lock("handover")
		if err == nil {
			unlock()
		}
		got <- err
	}()
	<-waiting
	h.release(t)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

// TestLockWaitNotice: a wait that goes on is reported once, naming the
// lock, its holder and the bound. (The test ends the wait from the
// notice, so nothing depends on how fast the machine is.)
func TestLockWaitNotice(t *testing.T) {
	lockNoticeAfter = 0
	t.Cleanup(func() { lockNoticeAfter = LockNoticeAfter })
	tests := []struct {
		name string
		hold func(t *testing.T, v *Vault) (pid int, self bool)
	}{
		{"another process", func(t *testing.T, v *Vault) (int, bool) {
			return holdInChild(t, v, "n").cmd.Process.Pid, false
		}},
		{"this process", func(t *testing.T, v *Vault) (int, bool) {
			unlock, err := v.Lock("n")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(unlock)
			return os.Getpid(), true
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustInit(t)
			v.config.Store(&Config{LockTimeout: "10m"})
			pid, self := tt.hold(t, v)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var notices []LockWaitNotice
			v.OnLockWait(func(n LockWaitNotice) {
				notices = append(notices, n)
				cancel()
			})
			if _, err := v.LockContext(ctx, "n"); !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want the wait ended from the notice", err)
			}
			if len(notices) != 1 {
				t.Fatalf("%d notices, want 1: %+v", len(notices), notices)
			}
			n := notices[0]
			if n.Name != "n" || n.Path != v.LockPath("n") || n.Wait != 10*time.Minute || n.Self != self {
				t.Fatalf("notice %+v", n)
			}
			if runtime.GOOS != "windows" && n.PID != pid {
				t.Fatalf("notice names %d, want %d", n.PID, pid)
			}
			v.OnLockWait(nil)
			v.config.Store(&Config{LockTimeout: "10ms"})
			if _, err := v.Lock("n"); !errors.Is(err, ErrLockTimeout) || len(notices) != 1 {
				t.Fatalf("after OnLockWait(nil): %v, %d notices", err, len(notices))
			}
		})
	}
}

// TestLockContextCanceledWhileWaiting: a caller's cancel ends a wait for
// another process's lock with the caller's error, not a timeout.
func TestLockContextCanceledWhileWaiting(t *testing.T) {
	v := mustInit(t)
	holdInChild(t, v, "c")
	waiting := make(chan struct{})
	var once sync.Once
	testHookAwait = func(string, bool) { once.Do(func() { close(waiting) }) }
	t.Cleanup(func() { testHookAwait = nil })
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := v.LockContext(ctx, "c")
		got <- err
	}()
	<-waiting
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) || errors.Is(err, ErrLockTimeout) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// BenchmarkLockHandover is the time from a release by another holder (an
// open file description of its own, as another process has) to the
// waiter holding the lock: "handover-µs".
func BenchmarkLockHandover(b *testing.B) {
	v := mustInit(b)
	path := v.LockPath("handover")
	if u, err := v.Lock("handover"); err != nil {
		b.Fatal(err)
	} else {
		u()
	}
	waiting := make(chan struct{}, 1)
	testHookAwait = func(_ string, start bool) {
		if start {
			waiting <- struct{}{}
		}
	}
	b.Cleanup(func() { testHookAwait = nil })
	var total time.Duration
	for b.Loop() {
		other := flock.New(path)
		if err := other.Lock(); err != nil {
			b.Fatal(err)
		}
		got := make(chan time.Time, 1)
		go func() {
			unlock, err := v.Lock("handover")
			if err != nil {
				b.Error(err)
			}
			got <- time.Now()
			if unlock != nil {
				unlock()
			}
		}()
		<-waiting
		time.Sleep(time.Millisecond) // let it settle into its wait
		released := time.Now()
		other.Unlock()
		other.Close()
		total += (<-got).Sub(released)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "handover-µs")
}

func stacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// openFiles counts this process's open files where the system tells
// (Linux), else 0.
func openFiles() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(ents)
}
