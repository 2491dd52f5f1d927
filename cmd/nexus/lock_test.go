package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/nexus-memory/nexus/vault"
)

// TestHelperHoldLock is not a test: run as a child process (by holdLock),
// it takes the locks named in NEXUS_TEST_HOLD_LOCKS on the vault in
// NEXUS_TEST_HOLD_VAULT, prints "held", and hangs — a hung process that
// holds a Nexus lock.
func TestHelperHoldLock(t *testing.T) {
	dir := os.Getenv("NEXUS_TEST_HOLD_VAULT")
	if dir == "" {
		return // not the child
	}
	v, err := vault.Open(dir)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for _, name := range strings.Split(os.Getenv("NEXUS_TEST_HOLD_LOCKS"), ",") {
		if _, err := v.Lock(name); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
	}
	fmt.Println("held")
	select {} // hung
}

// holdLock starts a child process that takes the named locks of the vault
// in dir and hangs, and returns its PID. The child is killed when the test
// ends.
func holdLock(t *testing.T, dir string, names ...string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldLock$")
	cmd.Env = append(os.Environ(), "NEXUS_TEST_HOLD_VAULT="+dir, "NEXUS_TEST_HOLD_LOCKS="+strings.Join(names, ","))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "held" {
		t.Fatalf("lock holder: %q, %v", line, err)
	}
	return cmd.Process.Pid
}

// setLockTimeout appends lock_timeout to the vault's config.
func setLockTimeout(t *testing.T, dir, d string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(vault.ConfigFile))
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "\nlock_timeout: %s\n", d); err != nil {
		t.Fatal(err)
	}
}

// feedLockName is the lock 'log append' takes for agent on this vault's
// device.
func feedLockName(t *testing.T, dir, agent string) string {
	t.Helper()
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := v.Device()
	if err != nil {
		t.Fatal(err)
	}
	return "livelog-live-" + agent + "@" + dev
}

// TestHungLockHolder: a process holds a lock and hangs. 'log append' and
// 'log verify' give up after lock_timeout instead of waiting for ever,
// exit 3 (could not check / could not get the lock), and name the holder's
// PID with what to do about it; nothing is appended.
func TestHungLockHolder(t *testing.T) {
	dir := logVault(t)
	if code, _, e := logCLI(t, "", "--vault", dir, "--agent", "lyra", "log", "append", "before the hang"); code != 0 {
		t.Fatalf("append: %s", e)
	}
	setLockTimeout(t, dir, "300ms")
	pid := holdLock(t, dir, feedLockName(t, dir, "lyra"), "livelog-witness")
	wantPID := runtime.GOOS != "windows" // lock files hold no PID there

	check := func(t *testing.T, code int, stderr string) {
		t.Helper()
		if code != exitUnsure {
			t.Fatalf("exit %d, want %d; stderr: %s", code, exitUnsure, stderr)
		}
		for _, want := range []string{"was not free within 300ms", "lock_timeout"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q: %s", want, stderr)
			}
		}
		if wantPID {
			for _, want := range []string{"process " + strconv.Itoa(pid) + " holds it", "kill " + strconv.Itoa(pid)} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q: %s", want, stderr)
				}
			}
		}
	}
	t.Run("append", func(t *testing.T) {
		code, _, stderr := logCLI(t, "", "--vault", dir, "--agent", "lyra", "log", "append", "during the hang")
		check(t, code, stderr)
		code, out, stderr := logCLI(t, "", "--vault", dir, "--agent", "lyra", "--json", "log", "append", "during the hang")
		check(t, code, stderr)
		var doc struct {
			Success  bool   `json:"success"`
			Error    string `json:"error"`
			ExitCode int    `json:"exit_code"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Success || doc.ExitCode != exitUnsure {
			t.Fatalf("--json: %v %+v\n%s", err, doc, out)
		}
	})
	t.Run("verify", func(t *testing.T) {
		// With the witness gone, verify must record what it sees: it
		// needs the witness lock.
		if err := os.Remove(filepath.Join(dir, ".nexus", "state", "livelog", "witness.json")); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := logCLI(t, "", "--vault", dir, "log", "verify")
		check(t, code, stderr)
	})
	t.Run("nothing appended", func(t *testing.T) {
		_, out, _ := logCLI(t, "", "--vault", dir, "log", "read", "-n", "10")
		if strings.Contains(out, "during the hang") || !strings.Contains(out, "before the hang") {
			t.Fatalf("log after the refused appends:\n%s", out)
		}
	})
}

// hungWitnessLock (a commandCases prepare): a hung process holds the log's
// witness lock, the witness is gone (so verify must take that lock to
// record what it sees), and lock_timeout is short.
func hungWitnessLock(t *testing.T, dir string) {
	t.Helper()
	setLockTimeout(t, dir, "200ms")
	if err := os.Remove(filepath.Join(dir, ".nexus", "state", "livelog", "witness.json")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	holdLock(t, dir, "livelog-witness")
}

// hungFeedLock (a commandCases prepare): a hung process holds lyra's feed
// lock on this device, and lock_timeout is short.
func hungFeedLock(t *testing.T, dir string) {
	t.Helper()
	setLockTimeout(t, dir, "200ms")
	holdLock(t, dir, feedLockName(t, dir, "lyra"))
}

// unreadableIdentity (a commandCases prepare): lyra's IDENTITY.md cannot be
// read — a folder stands in its place, which stops root too — so her
// public keys are unknown and verify cannot tell intact from forged.
func unreadableIdentity(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, "agents", "lyra", "IDENTITY.md")
	if err := os.Rename(p, p+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

// lockFolderIsAFile (a commandCases prepare): a file stands where
// .nexus/state/locks/ should be, so no lock can be taken, for root too.
func lockFolderIsAFile(t *testing.T, dir string) {
	t.Helper()
	locks := filepath.Join(dir, ".nexus", "state", "locks")
	if err := os.RemoveAll(locks); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(locks, []byte("not a folder\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLockWaitIsSaid: a command that waits for a lock longer than a second
// says on stderr whom it waits for and how long it will wait, before it
// gives up (issue: a 30 s wait with no output looks like a hang).
func TestLockWaitIsSaid(t *testing.T) {
	dir := logVault(t)
	if code, _, e := logCLI(t, "", "--vault", dir, "--agent", "lyra", "log", "append", "before the hang"); code != 0 {
		t.Fatalf("append: %s", e)
	}
	setLockTimeout(t, dir, "2s")
	name := feedLockName(t, dir, "lyra")
	pid := holdLock(t, dir, name)
	code, _, stderr := logCLI(t, "", "--vault", dir, "--agent", "lyra", "log", "append", "during the hang")
	if code == 0 {
		t.Fatalf("append under a hung lock succeeded; stderr %q", stderr)
	}
	want := "nexus: waiting for " + name + ", held by process " + strconv.Itoa(pid) + "; giving up after 2s (lock_timeout)"
	if runtime.GOOS == "windows" { // lock files hold no PID there
		want = "nexus: waiting for " + name + ", held by "
	}
	if !strings.Contains(stderr, want) {
		t.Fatalf("stderr does not say whom it waits for:\nwant %q\ngot  %q", want, stderr)
	}
	if strings.Count(stderr, "nexus: waiting for") != 1 {
		t.Fatalf("the wait is said %d times, want once: %q", strings.Count(stderr, "nexus: waiting for"), stderr)
	}
}
