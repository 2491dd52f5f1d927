//go:build unix

package index

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/index/holder"
)

// TestStoppedHolder: a holder stopped (SIGSTOP) after it answered the
// ping does not make a search wait forever: the search gives up once the
// holder has been silent for ten keep-alive intervals, tries to take the
// index over (the stopped process still holds its lock) or reach a new
// holder (the stopped one does not answer the ping), and fails with a
// connection error naming the holder. Once the holder runs again, the
// next search is answered by it.
func TestStoppedHolder(t *testing.T) {
	v := mustVault(t, map[string]string{"a.md": "feijoa"})
	h := startHolder(t, v, "NEXUS_INDEX_HELPER_KEEPALIVE=50ms")
	defer func() {
		h.cmd.Process.Signal(syscall.SIGCONT)
		if err := h.stop(); err != nil {
			t.Error(err)
		}
	}()
	ix := mustOpen(t, v, Options{})
	if !ix.Remote() {
		t.Fatal("index not held by the helper")
	}
	if err := h.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, h.cmd.Process.Pid)
	_, err := ix.Search(context.Background(), Query{Text: "feijoa"})
	if !holder.IsConnError(err) || !strings.Contains(err.Error(), "sent nothing") {
		t.Fatalf("search of a stopped holder: %v, want a connection error saying it sent nothing", err)
	}
	if err := h.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if res := mustSearch(t, ix, Query{Text: "feijoa"}); len(res.Hits) != 1 || !ix.Remote() {
		t.Fatalf("after the holder resumed: %v remote=%v", paths(res), ix.Remote())
	}
}

// waitStopped waits until every thread of process pid has stopped: a
// signal is delivered when the process next runs, and on a loaded machine
// a search sent at once could still be answered. Where /proc is missing
// (macOS) it waits for ps to show the process stopped.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if stoppedProcess(pid) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d did not stop", pid)
}

func stoppedProcess(pid int) bool {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
		return err == nil && strings.HasPrefix(strings.TrimSpace(string(out)), "T")
	}
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			return false
		}
		// pid (comm) STATE ...: comm may hold spaces and parentheses.
		_, rest, ok := strings.Cut(string(b[bytes.LastIndexByte(b, ')')+1:]), " ")
		if !ok || !strings.HasPrefix(rest, "T") && !strings.HasPrefix(rest, "t") {
			return false
		}
	}
	return true
}
