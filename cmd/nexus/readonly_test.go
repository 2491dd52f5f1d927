package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// readCommands are the commands that only read the vault. Each must work
// without write access to .nexus/state/ (another user's vault, a read-only
// disk): they take no lock they cannot have, and skip refreshing derived
// state (the log's witness, INDEX.md) instead of failing.
var readCommands = []struct {
	args []string
	// pure: never writes at all, so it must not even create the lock
	// folder when it is missing. The others record what they saw when
	// they can (verify and feeds the witness; fact commands, prompt and
	// journey bring INDEX.md in step).
	pure bool
}{
	{[]string{"log", "verify"}, false},
	{[]string{"log", "feeds"}, false},
	{[]string{"log", "read"}, true},
	{[]string{"--agent", "lyra", "log", "read", "--unread"}, true},
	{[]string{"log", "tail", "-n", "3"}, true},
	{[]string{"--agent", "lyra", "memory", "show"}, true},
	{[]string{"--agent", "lyra", "fact", "list"}, false},
	{[]string{"--agent", "lyra", "fact", "read", "deploy-rule"}, false},
	{[]string{"--agent", "lyra", "prompt"}, false},
	{[]string{"decisions"}, true},
	{[]string{"--agent", "lyra", "checkpoint", "show"}, true},
	{[]string{"review", "list"}, true},
	{[]string{"journey"}, false},
	{[]string{"agent", "list"}, true},
	{[]string{"agent", "show", "lyra"}, true},
}

// cliFunc runs one nexus invocation and returns its exit code and output.
type cliFunc func(t *testing.T, args ...string) (code int, stdout, stderr string)

// inProcess runs nexus in this process, as this user.
func inProcess(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return logCLI(t, "", args...)
}

func runReads(t *testing.T, dir string, pureOnly bool, cli cliFunc) {
	t.Helper()
	for _, c := range readCommands {
		if pureOnly && !c.pure {
			continue
		}
		code, out, stderr := cli(t, append([]string{"--vault", dir}, c.args...)...)
		if code != 0 {
			t.Errorf("%v: exit %d\n%s", c.args, code, stderr)
			continue
		}
		if c.args[0] == "log" && c.args[1] == "verify" && !strings.Contains(out, "note: this machine's witness of the log was not updated") {
			t.Errorf("verify does not say it could not record its witness:\n%s", out)
		}
	}
}

// forgetWitness removes the log's witness, so verify has something to
// record (and must try to take the witness lock).
func forgetWitness(t *testing.T, dir string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, ".nexus", "state", "livelog", "witness.json")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// TestReadsWithLockFolderUnusable: a file where .nexus/state/locks/ should
// be makes every attempt to create or open a lock file fail, for root too.
// Every read command still works, verify says it did not record its
// witness, and the file is left as it was: nothing tried to replace it.
func TestReadsWithLockFolderUnusable(t *testing.T) {
	dir, _, _ := fixtureVault(t)
	locks := filepath.Join(dir, ".nexus", "state", "locks")
	if err := os.RemoveAll(locks); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(locks, []byte("not a folder\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	forgetWitness(t, dir)
	runReads(t, dir, false, inProcess)
	if data, err := os.ReadFile(locks); err != nil || string(data) != "not a folder\n" {
		t.Fatalf("the file in the lock folder's place: %q, %v", data, err)
	}
	// A write still refuses, and says why.
	code, _, stderr := logCLI(t, "", "--vault", dir, "--agent", "lyra", "log", "append", "x")
	if code == 0 || !strings.Contains(stderr, "not a directory") {
		t.Fatalf("append with no lock folder: exit %d: %s", code, stderr)
	}
}

// TestPureReadsCreateNoLocks: with the lock folder missing, the commands
// that only read leave it missing: they never create or open a lock file.
func TestPureReadsCreateNoLocks(t *testing.T) {
	dir, _, _ := fixtureVault(t)
	locks := filepath.Join(dir, ".nexus", "state", "locks")
	if err := os.RemoveAll(locks); err != nil {
		t.Fatal(err)
	}
	runReads(t, dir, true, inProcess)
	if _, err := os.Lstat(locks); !os.IsNotExist(err) {
		t.Fatalf("a read command created %s: %v", locks, err)
	}
}

// TestReadsWithoutWriteAccess: .nexus/state/ not writable, as for another
// user (or a read-only disk). chmod does not stop root, so as root (CI)
// the commands run as the user nobody, through setpriv.
func TestReadsWithoutWriteAccess(t *testing.T) {
	dir, _, _ := fixtureVault(t)
	cli := inProcess
	if os.Geteuid() == 0 {
		cli = asNobody(t, dir)
	}
	forgetWitness(t, dir)
	state := filepath.Join(dir, ".nexus", "state")
	var dirs []string
	err := filepath.WalkDir(state, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		mode := os.FileMode(0o444)
		if strings.HasSuffix(p, ".lock") {
			mode = 0o400 // older vaults made lock files 0600
		}
		return os.Chmod(p, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		os.Chmod(d, 0o555)
	}
	t.Cleanup(func() {
		for _, d := range dirs {
			os.Chmod(d, 0o755)
		}
	})
	runReads(t, dir, false, cli)
}

// asNobody returns a cliFunc that runs the nexus binary as the user
// nobody (uid and gid 65534, no other groups) through setpriv
// (util-linux), for tests running as root, whom file modes do not stop.
// dir and the folders above it are made searchable by others. It skips
// the test only where there is no setpriv to drop to another user.
func asNobody(t *testing.T, dir string) cliFunc {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("running as root: dropping to another user needs setpriv (Linux)")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("running as root without setpriv (util-linux) to drop to another user")
	}
	bin := buildBinary(t)
	for p := dir; p != "/" && p != "."; p = filepath.Dir(p) {
		if st, err := os.Stat(p); err == nil && st.Mode().Perm()&0o005 != 0o005 {
			if err := os.Chmod(p, st.Mode().Perm()|0o005); err != nil {
				t.Fatal(err)
			}
		}
	}
	return func(t *testing.T, args ...string) (int, string, string) {
		t.Helper()
		c := exec.Command(setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin}, args...)...)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("setpriv nexus %v: %v", args, err)
		}
		return c.ProcessState.ExitCode(), out.String(), errb.String()
	}
}
