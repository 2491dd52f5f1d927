//go:build unix

package retention

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/vault"
)

// TestKillHelper is the process TestReviewSurvivesSIGKILL kills: it
// retains, approves, rejects, approves all and rolls back in a loop
// until it is killed — by the parent at a random moment, or by itself at
// the Nth step hook (after an apply, after each restored file) when
// NEXUS_KILL_AT_HOOK is set.
func TestKillHelper(t *testing.T) {
	root := os.Getenv("NEXUS_KILL_VAULT")
	if root == "" {
		t.Skip("helper process for TestReviewSurvivesSIGKILL")
	}
	v, err := vault.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := strconv.ParseUint(os.Getenv("NEXUS_KILL_SEED"), 10, 64)
	rng := rand.New(rand.NewPCG(seed, 13))
	if n, _ := strconv.Atoi(os.Getenv("NEXUS_KILL_AT_HOOK")); n > 0 {
		calls := 0
		kill := func() {
			if calls++; calls >= n {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
		testHookApplied, testHookRestored = kill, kill
	}
	d := Decision{By: "tester", Why: "soak", Now: t0}
	for i := 0; ; i++ {
		tag := fmt.Sprintf("%d-%d", seed, i)
		switch r := rng.IntN(100); {
		case r < 30:
			it, err := Retain(v, "lyra", fact("fact "+tag), Provenance{Source: "soak"}, t0)
			if err == nil {
				Approve(v, it.ID, d)
			}
		case r < 45:
			it, err := Retain(v, "lyra", fact("fact "+tag), Provenance{Source: "soak"}, t0)
			if err == nil {
				Reject(v, it.ID, d)
			}
		case r < 60:
			res, err := WriteMemory(v, "lyra", agents.TargetMemory, []agents.Op{{Action: "add", Content: "note " + tag}}, Provenance{}, t0)
			if err == nil && res.PendingID != "" {
				if rng.IntN(2) == 0 {
					Approve(v, res.PendingID, d)
				} else {
					Reject(v, res.PendingID, d)
				}
			}
		case r < 70:
			if items, _ := List(v, Filter{Agent: "lyra"}); len(items) > 0 {
				it := items[rng.IntN(len(items))]
				if rng.IntN(2) == 0 {
					Approve(v, it.ID, d)
				} else {
					Reject(v, it.ID, d)
				}
			}
		case r < 85:
			// Bulk approvals and rollbacks touch orion's facts only, so a
			// rollback never undoes a later single approval of lyra's.
			for k := range 3 {
				Retain(v, "orion", fact(fmt.Sprintf("bulk %s-%d", tag, k)), Provenance{Source: "soak"}, t0)
			}
			ApproveAll(v, Filter{Agent: "orion"}, d)
		default:
			Rollback(v, "", t0)
		}
	}
}

// holdsEntry reports whether the bounded-memory file holds entry as a
// whole entry: "note 210-1" must not be found inside "note 210-12".
func holdsEntry(memory, entry string) bool {
	for _, e := range strings.Split(strings.ReplaceAll(memory, "\r\n", "\n"), "\n§\n") {
		if strings.TrimSpace(e) == entry {
			return true
		}
	}
	return false
}

var reviewSource = regexp.MustCompile(`review:(r-[0-9a-f]+)`)

// TestReviewSurvivesSIGKILL kills a process deciding review items at
// random points, killRounds times; after each kill one command's worth of
// recovery ([Recover], as every command runs) must leave every item fully
// pending or fully decided, facts and INDEX.md in agreement, and nothing
// unfinished for doctor to report.
func TestReviewSurvivesSIGKILL(t *testing.T) {
	v := mustVault(t)
	if err := v.UpdateConfig(func(c *vault.Config) error {
		c.Review.WriteApproval = true
		c.MemoryIndexLineLimit = 100000
		c.MemoryCharLimit = 1000000
		c.SnapshotsKeep = 1000
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	v = reopen(t, v)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	var recovered, byHook int
	for round := range killRounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), "NEXUS_KILL_VAULT="+v.Root(), fmt.Sprint("NEXUS_KILL_SEED=", round))
		hook := rng.IntN(2) == 0
		if hook {
			cmd.Env = append(cmd.Env, fmt.Sprint("NEXUS_KILL_AT_HOOK=", 1+rng.IntN(6)))
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
			byHook++
		case <-time.After(wait(hook, rng)):
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
		}
		if ins, _ := Unfinished(v); len(ins) > 0 {
			recovered++
		}
		res, err := Recover(v)
		if err != nil {
			t.Fatalf("round %d: recover: %v (%+v)", round, err, res)
		}
		checkReviewConsistent(t, v, round)
		if t.Failed() {
			return
		}
	}
	t.Logf("%d kills (%d at a step hook), %d left a decision half done and were finished by the next command", killRounds, byHook, recovered)
	if recovered == 0 {
		t.Errorf("no kill landed inside a decision; the test proves nothing")
	}
}

// wait is how long the parent lets the helper run before it kills it: a
// random moment, or (hook) long enough for the helper to kill itself.
func wait(hook bool, rng *rand.Rand) time.Duration {
	if hook {
		return 20 * time.Second
	}
	return time.Duration(20+rng.IntN(150)) * time.Millisecond
}

func checkReviewConsistent(t *testing.T, v *vault.Vault, round int) {
	t.Helper()
	if ins, err := Unfinished(v); err != nil || len(ins) > 0 {
		t.Errorf("round %d: doctor would report unfinished decisions: %+v %v", round, ins, err)
	}
	factOf := map[string]agents.Fact{} // review id -> fact
	for _, agent := range []string{"lyra", "orion"} {
		facts, err := agents.ListFacts(v, agent)
		if err != nil {
			t.Fatalf("round %d: list facts: %v", round, err)
		}
		for _, f := range facts {
			if m := reviewSource.FindStringSubmatch(f.Source); m != nil {
				factOf[m[1]] = f
			}
		}
		checkIndex(t, v, round, agent, facts)
	}
	memory := readFileOr(v, "agents/lyra/MEMORY.md")
	pending, err := List(v, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range pending {
		if it.Status != StatusPending {
			t.Errorf("round %d: %s is %q in review/pending/", round, it.ID, it.Status)
		}
		if _, err := os.Stat(v.MustPath(ArchivePath(it.ID))); err == nil {
			t.Errorf("round %d: %s is both pending and archived", round, it.ID)
		}
		if f, ok := factOf[it.ID]; ok {
			t.Errorf("round %d: %s is pending but its fact %s was written", round, it.ID, f.Path)
		}
		if it.Kind == KindMemory && holdsEntry(memory, it.Ops[0].Content) {
			t.Errorf("round %d: %s is pending but MEMORY.md holds %q", round, it.ID, it.Ops[0].Content)
		}
	}
	des, _ := os.ReadDir(v.MustPath(vault.ArchiveDir))
	for _, de := range des {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".md") || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		id := strings.TrimSuffix(de.Name(), ".md")
		it, err := readItem(v, ArchivePath(id))
		if err != nil {
			t.Errorf("round %d: archive %s unreadable: %v", round, id, err)
			continue
		}
		_, applied := factOf[id]
		if it.Kind == KindMemory {
			applied = holdsEntry(memory, it.Ops[0].Content)
		}
		switch it.Status {
		case StatusApproved:
			if !applied {
				t.Errorf("round %d: %s approved but not applied", round, id)
			}
		case StatusRejected:
			if applied {
				t.Errorf("round %d: %s rejected but applied", round, id)
			}
		default:
			t.Errorf("round %d: archived %s has status %q", round, id, it.Status)
		}
	}
	// No fact file without a review item it came from.
	for id, f := range factOf {
		if _, err := os.Stat(v.MustPath(ArchivePath(id))); err != nil {
			t.Errorf("round %d: fact %s from %s, which is not decided", round, filepath.Base(f.Path), id)
		}
	}
}

// checkIndex wants INDEX.md to list exactly the fact files.
func checkIndex(t *testing.T, v *vault.Vault, round int, agent string, facts []agents.Fact) {
	t.Helper()
	var onDisk, listed []string
	for _, f := range facts {
		onDisk = append(onDisk, f.Slug)
	}
	for _, line := range strings.Split(readFileOr(v, agents.HomePath(agent, agents.IndexFile)), "\n") {
		if rest, ok := strings.CutPrefix(line, "- [["); ok {
			slug, _, _ := strings.Cut(rest, "|")
			slug, _, _ = strings.Cut(slug, "]]")
			listed = append(listed, slug)
		}
	}
	sort.Strings(onDisk)
	sort.Strings(listed)
	if strings.Join(onDisk, ",") != strings.Join(listed, ",") {
		t.Errorf("round %d: %s's INDEX.md lists %v, fact files are %v", round, agent, listed, onDisk)
	}
}

func readFileOr(v *vault.Vault, rel string) string {
	data, _ := os.ReadFile(v.MustPath(rel))
	return string(data)
}
