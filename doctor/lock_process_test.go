package doctor

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/nexus-memory/nexus/vault"
)

// TestHelperProcess is not a test: re-executed by TestStuckLockInAnotherProcess
// with NEXUS_DOCTOR_HELPER=VAULT, it takes the vault's livelog lock, says
// "locked", and holds it until its stdin closes or it is killed.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv("NEXUS_DOCTOR_HELPER")
	if dir == "" {
		return
	}
	v, err := vault.Open(dir)
	if err != nil {
		os.Exit(3)
	}
	if _, err := v.Lock("livelog"); err != nil {
		os.Exit(4)
	}
	os.Stdout.WriteString("locked\n")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// TestStuckLockInAnotherProcess: a lock held by a live, hung process is
// reported; once that process dies the kernel frees it and doctor is happy.
func TestStuckLockInAnotherProcess(t *testing.T) {
	v := mustVault(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "NEXUS_DOCTOR_HELPER="+v.Root())
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	defer func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		t.Fatalf("helper: %q %v", line, err)
	}

	rep := mustRun(t, v.Root())
	fs := findingsOf(rep, "locks")
	if len(fs) != 1 || fs[0].Path != ".nexus/state/locks/livelog.lock" {
		t.Fatalf("locks findings %+v, want the held livelog lock", fs)
	}
	for _, r := range rep.Results {
		if r.Check == "log" && !strings.HasPrefix(r.Summary, "skipped") {
			t.Errorf("the log check should skip behind the held lock, got %q", r.Summary)
		}
	}

	// The hung process is killed: no stale lock remains.
	must(t, cmd.Process.Kill())
	cmd.Wait()
	rep = mustRun(t, v.Root())
	if !rep.OK {
		t.Fatalf("after the holder died: %+v", rep.Findings())
	}
}
