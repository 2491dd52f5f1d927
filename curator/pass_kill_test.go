//go:build unix

package curator

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

var killPassAt = t0.Add(4 * time.Hour)

// TestPassKillHelper is the process TestCuratorPassKilledBeforeDiary
// kills: it runs a pass and SIGKILLs itself once the proposals are filed,
// before the diary is written.
func TestPassKillHelper(t *testing.T) {
	root := os.Getenv("NEXUS_PASS_KILL_VAULT")
	if root == "" {
		t.Skip("helper process for TestCuratorPassKilledBeforeDiary")
	}
	v, err := vault.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	testHookBeforeDiary = func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	if _, err := Run(v, PassOptions{Now: killPassAt}); err != nil {
		t.Fatal(err)
	}
}

// TestCuratorPassKilledBeforeDiary: a pass killed between filing its
// proposals and writing its diary is named as interrupted, and the next
// pass writes the diary from the items it filed, without filing them
// again.
func TestCuratorPassKilledBeforeDiary(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a helper process")
	}
	v := mustVault(t)
	filePromotionSignals(t, v)
	cmd := exec.Command(os.Args[0], "-test.run=^TestPassKillHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "NEXUS_PASS_KILL_VAULT="+v.Root())
	out, err := cmd.CombinedOutput()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the helper was not killed: %v\n%s", err, out)
	}
	proms := pendingOf(t, v, retention.KindPromote)
	if len(proms) != 1 {
		t.Fatalf("the killed pass filed %+v", proms)
	}
	passID := proms[0].Provenance.Session
	diary := vault.CuratorDir + "/" + passID + ".md"
	if exists(v, diary) {
		t.Fatal("the diary was written before the kill")
	}
	ip, err := Interrupted(v)
	if err != nil || len(ip) != 1 || ip[0].ID != passID {
		t.Fatalf("Interrupted = %+v, %v; want pass %s", ip, err, passID)
	}
	// The next pass completes it.
	res, err := Run(v, PassOptions{Now: killPassAt.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if !exists(v, diary) {
		t.Fatalf("the next pass did not write the diary of %s (notes %v)", passID, res.Notes)
	}
	text := readFile(t, v, diary)
	if !strings.Contains(text, "[["+strings.TrimSuffix(retention.PendingPath(proms[0].ID), ".md")+"]]") || !strings.Contains(text, "proposals: 1") || !strings.Contains(text, "interrupted") {
		t.Errorf("the completed diary:\n%s", text)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), passID) {
		t.Errorf("the next pass does not say it completed %s: %v", passID, res.Notes)
	}
	if ip, _ := Interrupted(v); len(ip) != 0 {
		t.Errorf("still interrupted: %+v", ip)
	}
	if p := pendingOf(t, v, retention.KindPromote); len(p) != 1 {
		t.Errorf("promotions after the next pass: %+v", p)
	}
}
