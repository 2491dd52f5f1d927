package vault

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv("NEXUS_LOCK_HOLD_VAULT"); dir != "" {
		if err := holdChild(dir, os.Getenv("NEXUS_LOCK_HOLD_NAME")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if dir := os.Getenv("NEXUS_LOCK_CHILD_VAULT"); dir != "" {
		if err := lockChild(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// lockChild is the child process of TestLockAcrossProcesses. It increments
// a counter file n times, each time reading and rewriting it under the
// lock, so a lost update shows as a short count.
func lockChild(dir string) error {
	v, err := Open(dir)
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(os.Getenv("NEXUS_LOCK_CHILD_N"))
	p := filepath.Join(dir, "counter")
	for i := 0; i < n; i++ {
		unlock, err := v.Lock("counter")
		if err != nil {
			return err
		}
		b, _ := os.ReadFile(p)
		c, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		err = WriteFile(p, []byte(strconv.Itoa(c+1)), 0o644)
		unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

func TestLockAcrossProcesses(t *testing.T) {
	v := mustInit(t)
	const procs, n = 4, 50
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for i := 0; i < procs; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), "NEXUS_LOCK_CHILD_VAULT="+v.Root(), "NEXUS_LOCK_CHILD_N="+strconv.Itoa(n))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("child: %v\n%s", err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(v.Root(), "counter"))
	if got := strings.TrimSpace(string(b)); got != strconv.Itoa(procs*n) {
		t.Fatalf("counter = %s, want %d: updates were lost", got, procs*n)
	}
}

func TestLockInProcessAndContext(t *testing.T) {
	v := mustInit(t)
	unlock, err := v.Lock("x")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := v.LockContext(ctx, "x"); err == nil {
		t.Fatal("second lock of a held lock succeeded")
	}
	unlock()
	unlock() // idempotent
	u2, err := v.LockContext(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	u2()
	if !strings.HasPrefix(v.LockPath("agents/lyra/MEMORY.md"), filepath.Join(v.Root(), ".nexus", "state", "locks")) {
		t.Fatalf("lock path %s outside state/locks", v.LockPath("agents/lyra/MEMORY.md"))
	}
}
