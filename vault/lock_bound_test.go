package vault

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLockWaitConfig(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"":      DefaultLockTimeout,
		"2s":    2 * time.Second,
		"1m30s": 90 * time.Second,
		"45":    45 * time.Second, // a number is seconds
		"250ms": 250 * time.Millisecond,
		"0":     DefaultLockTimeout,
		"-5s":   DefaultLockTimeout,
		"soon":  DefaultLockTimeout,
	} {
		if got := (Config{LockTimeout: in}).LockWait(); got != want {
			t.Errorf("lock_timeout %q: %s, want %s", in, got, want)
		}
	}
	if _, err := ParseLockTimeout("soon"); err == nil || !strings.Contains(err.Error(), "30s") {
		t.Errorf("ParseLockTimeout(soon) = %v", err)
	}
	cfg, err := parseConfig([]byte("lock_timeout: 3\n"))
	if err != nil || cfg.LockWait() != 3*time.Second {
		t.Fatalf("yaml number: %v %s", err, cfg.LockWait())
	}
	if cfg := DefaultConfig(); cfg.LockWait() != DefaultLockTimeout {
		t.Fatal(cfg.LockWait())
	}
}

// TestLockTimeoutInProcess: a lock held by another goroutine of this
// process is waited for only lock_timeout, and the error says so.
func TestLockTimeoutInProcess(t *testing.T) {
	v := mustInit(t)
	v.config.Store(&Config{LockTimeout: "50ms"})
	unlock, err := v.Lock("x")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, err = v.Lock("x")
	var te *LockTimeoutError
	if !errors.As(err, &te) || !errors.Is(err, ErrLockTimeout) || !te.Self || te.PID != os.Getpid() || te.Wait != 50*time.Millisecond {
		t.Fatalf("err = %#v", err)
	}
	if !strings.Contains(err.Error(), "this process (PID "+strconv.Itoa(os.Getpid())+")") {
		t.Fatal(err)
	}
	// A context that ends first is the caller's, not a timeout.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := v.LockContext(ctx, "x"); !errors.Is(err, context.Canceled) || errors.Is(err, ErrLockTimeout) {
		t.Fatalf("canceled: %v", err)
	}
}

// TestLockRecordsHolder: while a lock is held its holder can be named —
// by the kernel on Linux (and then nothing is written into the lock
// file), else by the PID the holder keeps in the lock file and blanks
// when it lets go, so a PID read there is a holder's.
func TestLockRecordsHolder(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("lock files hold no PID on Windows: the locked byte cannot be read by others")
	}
	v := mustInit(t)
	unlock, err := v.Lock("rec")
	if err != nil {
		t.Fatal(err)
	}
	if got := lockHolder(v.LockPath("rec")); got != os.Getpid() {
		t.Fatalf("lockHolder = %d", got)
	}
	data, _ := os.ReadFile(v.LockPath("rec"))
	kernel := kernelNamesHolders()
	if kernel != (runtime.GOOS == "linux" && procLocksHolder(v.LockPath("rec")) == os.Getpid()) {
		t.Fatalf("kernelNamesHolders = %v", kernel)
	}
	if kernel && len(data) != 0 {
		t.Fatalf("held: the kernel names the holder, yet the lock file holds %q", data)
	}
	if !kernel && (strings.TrimSpace(string(data)) != strconv.Itoa(os.Getpid()) || len(data) != pidWidth) {
		t.Fatalf("held: lock file holds %q", data)
	}
	unlock()
	data, _ = os.ReadFile(v.LockPath("rec"))
	if strings.TrimSpace(string(data)) != "" {
		t.Fatalf("released: lock file holds %q", data)
	}
	// The record itself, as kept where the kernel names no holder.
	rec := recordHolder(v.LockPath("rec"))
	data, _ = os.ReadFile(v.LockPath("rec"))
	if strings.TrimSpace(string(data)) != strconv.Itoa(os.Getpid()) || len(data) != pidWidth {
		t.Fatalf("recorded: lock file holds %q", data)
	}
	rec.clear()
	data, _ = os.ReadFile(v.LockPath("rec"))
	if strings.TrimSpace(string(data)) != "" || len(data) != pidWidth {
		t.Fatalf("cleared: lock file holds %q", data)
	}
	if st, _ := os.Stat(v.LockPath("rec")); st.Mode().Perm() != 0o600 {
		t.Fatalf("lock file mode %v: other users could hold up this vault's writers", st.Mode())
	}
	// A PID of a process that is gone is not named.
	os.WriteFile(v.LockPath("dead"), []byte("2147483646\n"), 0o644)
	if got := lockHolder(v.LockPath("dead")); got != 0 {
		t.Fatalf("dead holder named: %d", got)
	}
}

// TestLockFileBounded: another program's lock file (Hermes Agent's) is
// waited for with the same bound, and never written.
func TestLockFileBounded(t *testing.T) {
	v := mustInit(t)
	v.config.Store(&Config{LockTimeout: "50ms"})
	p := v.Root() + "/MEMORY.md.lock"
	os.WriteFile(p, []byte("hermes\n"), 0o644)
	unlock, err := v.LockFile(p, "Hermes Agent's lock")
	if err != nil {
		t.Fatal(err)
	}
	// A second handle in this process, like another process.
	if _, err := v.LockFile(p, "Hermes Agent's lock"); !errors.Is(err, ErrLockTimeout) || !strings.Contains(err.Error(), "Hermes Agent's lock") {
		t.Fatalf("second take: %v", err)
	}
	unlock()
	if data, _ := os.ReadFile(p); string(data) != "hermes\n" {
		t.Fatalf("Hermes's lock file changed: %q", data)
	}
}

// BenchmarkLockUnlock is one uncontended Lock and unlock: the in-process
// slot, the flock, and the PID written into the lock file and blanked.
func BenchmarkLockUnlock(b *testing.B) {
	v := mustInit(b)
	for b.Loop() {
		unlock, err := v.Lock("bench")
		if err != nil {
			b.Fatal(err)
		}
		unlock()
	}
}
