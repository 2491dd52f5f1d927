//go:build unix

package curator

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

var mergeApproveAt = t0.Add(5*day + time.Hour)

// TestMergeKillHelper is the process TestCuratorMergeSurvivesKill kills:
// it approves one merge and SIGKILLs itself at the Nth step hook (after
// the kept fact is written, after each fact archived, after each memory
// file relinked, once the change is recorded as landed, before the item is
// archived).
func TestMergeKillHelper(t *testing.T) {
	root := os.Getenv("NEXUS_MERGE_KILL_VAULT")
	if root == "" {
		t.Skip("helper process for TestCuratorMergeSurvivesKill")
	}
	v, err := vault.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(os.Getenv("NEXUS_MERGE_KILL_AT"))
	calls := 0
	kill := func() {
		if calls++; calls == n {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
	testHookCuratorStep, testHookCuratorApplied, testHookCuratorDone = kill, kill, kill
	if _, err := retention.Approve(v, os.Getenv("NEXUS_MERGE_KILL_ID"), retention.Decision{By: "person", Now: mergeApproveAt}); err != nil {
		t.Fatal(err)
	}
}

// killCase is a curator proposal whose approval TestCuratorApprovalSurvivesKill kills.
type killCase struct {
	name  string
	steps int // hook calls an approval makes
	setup func(t *testing.T) (*vault.Vault, string)
}

var killCases = []killCase{
	{"merge", 5, func(t *testing.T) (*vault.Vault, string) {
		// The Korean merge: the kept fact rewritten, one fact archived,
		// MEMORY.md relinked.
		v, slugs := mergeVault(t)
		koGone := slugs["PR 설명 언어"]
		m, err := agents.OpenMemory(v, "lyra", agents.TargetMemory)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Apply(agents.Op{Action: agents.ActionAdd, Content: "PR 규칙은 [[" + koGone + "|PR 설명]] 참고"}); err != nil {
			t.Fatal(err)
		}
		if _, err := Run(v, PassOptions{Now: t0.Add(5 * day)}); err != nil {
			t.Fatal(err)
		}
		for id, p := range mergePlans(t, v) {
			if p.Archive[0].Slug == koGone {
				if len(p.Links) != 1 || p.Body == "" {
					t.Fatalf("the Korean merge should rewrite the kept fact and relink MEMORY.md: %+v", p)
				}
				return v, id
			}
		}
		t.Fatal("no Korean merge proposed")
		return nil, ""
	}},
	{"archive", 4, func(t *testing.T) (*vault.Vault, string) {
		// Two of eight facts unused for 95 days: two facts archived.
		v := mustVault(t)
		for i := range 8 {
			if _, err := agents.WriteFact(v, "lyra", distinctFact(strconv.Itoa(i)), t0); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := FactStates(v, "lyra", t0); err != nil {
			t.Fatal(err)
		}
		if _, err := Run(v, PassOptions{Now: t0.Add(95 * day)}); err != nil {
			t.Fatal(err)
		}
		arch := pendingOf(t, v, retention.KindArchive)
		if len(arch) != 1 {
			t.Fatalf("archive proposals %+v", arch)
		}
		return v, arch[0].ID
	}},
}

// TestCuratorApprovalSurvivesKill approves a curator proposal in a process
// killed at each step in turn; the next command finishes the decision
// through the review intent, and the vault ends byte for byte as after an
// approval never killed.
func TestCuratorApprovalSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts helper processes")
	}
	for _, kc := range killCases {
		t.Run(kc.name, func(t *testing.T) {
			v, id := kc.setup(t)
			copyVault := func(name string) *vault.Vault {
				dst := filepath.Join(t.TempDir(), name)
				if err := os.CopyFS(dst, os.DirFS(v.Root())); err != nil {
					t.Fatal(err)
				}
				cv, err := vault.Open(dst)
				if err != nil {
					t.Fatal(err)
				}
				return cv
			}
			ref := copyVault("ref")
			done, err := retention.Approve(ref, id, retention.Decision{By: "person", Now: mergeApproveAt})
			if err != nil {
				t.Fatal(err)
			}
			want := treeSums(t, ref)
			for n := 1; n <= kc.steps; n++ {
				cv := copyVault("kill-" + strconv.Itoa(n))
				cmd := exec.Command(os.Args[0], "-test.run=^TestMergeKillHelper$", "-test.count=1")
				cmd.Env = append(os.Environ(), "NEXUS_MERGE_KILL_VAULT="+cv.Root(), "NEXUS_MERGE_KILL_ID="+id, "NEXUS_MERGE_KILL_AT="+strconv.Itoa(n))
				out, err := cmd.CombinedOutput()
				ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
				if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
					t.Fatalf("step %d: the helper was not killed: %v\n%s", n, err, out)
				}
				if ins, _ := retention.Unfinished(cv); len(ins) != 1 {
					t.Fatalf("step %d: %d intents left, want 1", n, len(ins))
				}
				res, err := retention.Recover(cv)
				if err != nil || len(res.Finished) != 1 {
					t.Fatalf("step %d: recover: %+v %v", n, res, err)
				}
				if d := diffSums(want, treeSums(t, cv)); len(d) > 0 {
					t.Errorf("killed at step %d and recovered, the vault differs from an approval never killed: %v", n, d)
				}
				it, err := retention.Get(cv, id)
				if err != nil || it.Status != retention.StatusApproved || it.Result != done.Result {
					t.Errorf("step %d: the item is not archived as approved with result %q: %+v %v", n, done.Result, it, err)
				}
			}
		})
	}
}
