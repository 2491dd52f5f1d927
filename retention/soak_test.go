//go:build soak

package retention

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/vault"
)

// TestSoakDecideWhileWriting runs several writer processes (each writing
// facts) while this process retains, approves, rejects and reconciles for
// a while, then checks that every fact and every decision is accounted for
// and the index is exactly in step. Run with:
//
//	go test -tags soak -run TestSoak -v ./retention/
func TestSoakDecideWhileWriting(t *testing.T) {
	v := mustVault(t)
	if err := v.UpdateConfig(func(c *vault.Config) error { c.MemoryIndexLineLimit = 100000; return nil }); err != nil {
		t.Fatal(err)
	}
	v = reopen(t, v)
	const writers, perWriter = 3, 150
	var cmds []*exec.Cmd
	var errs []*bytes.Buffer
	for w := range writers {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), "NEXUS_RETENTION_HELPER_VAULT="+v.Root(), "NEXUS_RETENTION_HELPER_N="+strconv.Itoa(perWriter), "NEXUS_RETENTION_HELPER_PREFIX="+fmt.Sprint("w", w))
		var b bytes.Buffer
		cmd.Stderr = &b
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, errs = append(cmds, cmd), append(errs, &b)
	}
	approved, rejected := 0, 0
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; time.Now().Before(deadline) && i < 400; i++ {
		it := mustRetain(t, v, "lyra", fact(fmt.Sprintf("soak proposal %d", i)), time.Now())
		switch i % 3 {
		case 0:
			if _, err := Approve(v, it.ID, Decision{By: "alice"}); err != nil {
				t.Fatal(err)
			}
			approved++
		case 1:
			setStatus(t, v, it.Path, "rejected", "soak")
			rejected++
		case 2:
			setStatus(t, v, it.Path, "approved", "")
			approved++
		}
		if i%5 == 0 {
			if _, err := Reconcile(v, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := Reconcile(v, time.Now()); err != nil {
		t.Fatal(err)
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("writer %d: %v\n%s", i, err, errs[i])
		}
	}
	if p, _ := List(v, Filter{}); len(p) != 0 {
		t.Fatalf("%d still pending", len(p))
	}
	facts, err := agents.ListFacts(v, "lyra")
	if err != nil || len(facts) != writers*perWriter+approved {
		t.Fatalf("facts = %d, want %d (%v)", len(facts), writers*perWriter+approved, err)
	}
	idx := readFile(t, v, agents.HomePath("lyra", agents.IndexFile))
	if n := strings.Count(idx, "\n"); n != len(facts) {
		t.Fatalf("INDEX.md %d lines for %d facts", n, len(facts))
	}
	t.Logf("%d helper facts, %d approved, %d rejected", writers*perWriter, approved, rejected)
}
