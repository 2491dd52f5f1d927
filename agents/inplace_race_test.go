package agents

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// The in-place save races (issue 13): a person saves a file in a tight
// loop the way Obsidian does — read it, change their own part, truncate
// the file through an open handle and write the new text — while agents
// write the same file through the library from other goroutines.
//
// What "overwritten" means here, precisely: save i puts the marker
// "person-%06d" (i) into the person's own part of the file, replacing the
// marker of save i-1, and keeps everything else it read. No agent ever
// removes or rewrites the person's part, and nobody else writes a marker.
// So the marker of save i can be missing from the file only if some agent
// write replaced the file with bytes computed from a version older than
// save i: save i was overwritten. The person checks, just before save i+1
// (and after the last save, once the agents have stopped), that the file
// still holds the marker of save i. Every save's content is therefore
// either the final content or was read and merged by a later write (an
// agent's, which kept the marker, or the person's next save). One more
// case counts as kept, and is counted apart: the save landed in the file an
// agent's rename was replacing, the agent saw that after its rename and
// put the save back (internal/atomicfile) — the person's next look, if it
// came in those microseconds, saw the agent's version, so the person looks
// again (as an editor reloads a file changed on disk) for up to 100 ms
// before counting the save overwritten. A save kept only as a conflict
// copy beside the file counts as overwritten. An agent write that meets
// vault.CASAttempts conflicts in a row returns ErrConflict, the documented
// outcome against a person saving nonstop (docs/vault.md): it loses
// nothing of the person's and is counted apart. Agent writes
// the person's read-modify-write drops are the editor's doing, not a
// lost save, and are not counted.
//
// inPlaceSaves is the default count; the soak build runs 10,000
// (inplace_soak_test.go).
const inPlaceSaves = 1000

func personMarker(i int) string { return fmt.Sprintf("person-%06d", i) }

// saveInPlaceNow truncates path through an open handle and writes text
// through it, yielding in between so other goroutines run while the file
// is empty, as an editor does.
func saveInPlaceNow(path, text string) error {
	h, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	runtime.Gosched()
	_, err = h.WriteString(text)
	if cerr := h.Close(); err == nil {
		err = cerr
	}
	return err
}

// raceReport is what one race saw.
type raceReport struct {
	saves, lost   int
	firstLost     []int
	agentWrites   atomic.Int64
	agentRetried  atomic.Int64 // agent writes that found their entry dropped by a save and added it again
	agentGaveUp   atomic.Int64 // agent writes that met vault.CASAttempts conflicts in a row and said so (ErrConflict)
	conflictCopys int
	putBackSeen   int // reads that saw an agent's version before the save it displaced was put back
}

// runPersonSaves saves path n times, each from a fresh read, changing the
// marker with edit; it counts saves whose marker was gone at the next read.
func runPersonSaves(t *testing.T, path string, n int, edit func(data string, prev, next string) string, rep *raceReport, stop func()) {
	t.Helper()
	for i := 1; i <= n; i++ {
		b, err := vault.ReadStable(path)
		if err != nil {
			t.Fatal(err)
		}
		data := string(b)
		if i > 1 && !strings.Contains(data, personMarker(i-1)) {
			// An agent's rename displaced the save a moment ago; the
			// writer puts it back within microseconds (atomicfile's
			// ReplaceIf). An editor reloads a file that changed on disk;
			// the person looks again for up to 100 ms.
			if again, ok := awaitMarker(path, personMarker(i-1), 100*time.Millisecond); ok {
				rep.putBackSeen++
				data = again
			} else {
				rep.lost++
				if len(rep.firstLost) < 5 {
					rep.firstLost = append(rep.firstLost, i-1)
				}
			}
		}
		if err := saveInPlaceNow(path, edit(data, personMarker(i-1), personMarker(i))); err != nil {
			t.Fatal(err)
		}
		rep.saves++
		// A pause of up to 2 ms lets agent writes through between saves
		// (with none they would only ever start over); their reads,
		// comparisons and renames then land at every point of a save.
		time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
	}
	stop()
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), personMarker(n)) {
		rep.lost++
		rep.firstLost = append(rep.firstLost, n)
	}
}

// awaitMarker re-reads path until it holds marker, for up to d.
func awaitMarker(path, marker string, d time.Duration) (string, bool) {
	for start := time.Now(); time.Since(start) < d; time.Sleep(time.Millisecond) {
		if b, err := vault.ReadStable(path); err == nil && strings.Contains(string(b), marker) {
			return string(b), true
		}
	}
	return "", false
}

func (rep *raceReport) check(t *testing.T, what, dir string) {
	t.Helper()
	copies, _ := os.ReadDir(dir)
	for _, de := range copies {
		if strings.Contains(de.Name(), "conflicted copy") {
			rep.conflictCopys++
		}
	}
	t.Logf("%s: %d in-place saves, %d agent writes (%d re-added an entry a save dropped, %d gave up after %d conflicts in a row), %d saves overwritten, %d kept as conflict copies, %d displaced and put back before the next save",
		what, rep.saves, rep.agentWrites.Load(), rep.agentRetried.Load(), rep.agentGaveUp.Load(), vault.CASAttempts, rep.lost, rep.conflictCopys, rep.putBackSeen)
	if rep.lost > 0 {
		t.Errorf("%s: %d of %d saves overwritten by agent writes (first: %v)", what, rep.lost, rep.saves, rep.firstLost)
	}
	if rep.agentWrites.Load() == 0 {
		t.Errorf("%s: no agent write ran during the saves; the race tested nothing", what)
	}
}

// raceMemory: MEMORY.md, the person's part is one entry, agents keep one
// entry each that they replace on every write.
func raceMemory(t *testing.T, saves, writers int) {
	v := memTestVault(t, 1_000_000, 0)
	m := memOpen(t, v, TargetMemory)
	if _, err := m.Apply(Op{Action: ActionAdd, Content: personMarker(0)}); err != nil {
		t.Fatal(err)
	}
	rep := &raceReport{}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			am, err := OpenMemory(v, "lyra", TargetMemory)
			if err != nil {
				t.Error(err)
				return
			}
			prefix := fmt.Sprintf("agent-%d-", g)
			for j := 1; ; j++ {
				select {
				case <-done:
					return
				default:
				}
				entry := fmt.Sprintf("%s%06d", prefix, j)
				_, err := am.Apply(Op{Action: ActionReplace, OldText: prefix, Content: entry})
				if errors.Is(err, ErrNoMatch) {
					rep.agentRetried.Add(1)
					_, err = am.Apply(Op{Action: ActionAdd, Content: entry})
				}
				if errors.Is(err, vault.ErrConflict) {
					rep.agentGaveUp.Add(1) // the documented outcome against a person saving nonstop
					continue
				}
				if err != nil {
					t.Errorf("agent %d write %d: %v", g, j, err)
					return
				}
				rep.agentWrites.Add(1)
			}
		}()
	}
	edit := func(data, prev, next string) string {
		es := ParseEntries([]byte(data))
		found := false
		for i, e := range es {
			if strings.HasPrefix(e, "person-") {
				es[i], found = next, true
			}
		}
		if !found {
			es = append(es, next) // a lost save: the count says so
		}
		return string(FormatEntries(es))
	}
	runPersonSaves(t, m.path, saves, edit, rep, func() { close(done); wg.Wait() })
	rep.check(t, "MEMORY.md", v.MustPath(HomePath("lyra", "")))
}

// raceFact: a fact file, the person's part is a frontmatter key
// ("reviewed: person-000123") that updates keep; agents update the fact
// (description, body, updated) through WriteFact.
func raceFact(t *testing.T, saves, writers int) {
	v := mustFactVault(t)
	f := mustWriteFact(t, v, FactInput{Name: "Deploy rule", Description: "staging first", Type: FactProject, Body: "Staging first."})
	p := v.MustPath(f.Path)
	b, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(b), "---\n", "---\nreviewed: "+personMarker(0)+"\n", 1)), 0o644)
	rep := &raceReport{}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 1; ; j++ {
				select {
				case <-done:
					return
				default:
				}
				in := FactInput{Name: "Deploy rule", Description: fmt.Sprintf("staging first (%d.%d)", g, j), Type: FactProject,
					Body: fmt.Sprintf("Staging first; update %d of writer %d.", j, g), Update: true}
				if _, err := WriteFact(v, "lyra", in, factNow.Add(time.Duration(j)*time.Second)); errors.Is(err, vault.ErrConflict) {
					rep.agentGaveUp.Add(1)
					continue
				} else if err != nil {
					t.Errorf("writer %d update %d: %v", g, j, err)
					return
				}
				rep.agentWrites.Add(1)
			}
		}()
	}
	edit := func(data, prev, next string) string {
		if strings.Contains(data, "reviewed: "+prev+"\n") {
			return strings.Replace(data, "reviewed: "+prev+"\n", "reviewed: "+next+"\n", 1)
		}
		// A lost save: put the key back so later saves are counted too.
		if i := strings.Index(data, "reviewed: person-"); i >= 0 {
			return data[:i] + "reviewed: " + next + data[i+len("reviewed: person-000000"):]
		}
		return strings.Replace(data, "---\n", "---\nreviewed: "+next+"\n", 1)
	}
	runPersonSaves(t, p, saves, edit, rep, func() { close(done); wg.Wait() })
	rep.check(t, "fact file", v.MustPath(HomePath("lyra", FactsDir)))
	if got, err := ReadFact(v, "lyra", "Deploy rule"); err != nil || !strings.HasPrefix(got.Description, "staging first (") {
		t.Errorf("after the race the fact reads %+v, %v", got, err)
	}
}

// TestInPlaceSavesRacingMemoryWrites: 0 of inPlaceSaves saves of MEMORY.md
// overwritten by three agents writing it meanwhile.
func TestInPlaceSavesRacingMemoryWrites(t *testing.T) {
	raceMemory(t, inPlaceSaves, 3)
}

// TestInPlaceSavesRacingFactUpdates: 0 of inPlaceSaves saves of a fact file
// overwritten by three agents updating the fact meanwhile.
func TestInPlaceSavesRacingFactUpdates(t *testing.T) {
	raceFact(t, inPlaceSaves, 3)
}

// Environment of the in-place race's agent processes.
const (
	raceHelperEnv   = "NEXUS_TEST_INPLACE_AGENT" // the agent's number
	raceHelperVault = "NEXUS_TEST_INPLACE_VAULT"
	raceHelperStop  = "NEXUS_TEST_INPLACE_STOP" // a file: once it exists, stop
)

// TestInPlaceRaceHelperProcess is not a test: raceMemoryProcesses runs the
// test binary with it as an agent process that replaces its own MEMORY.md
// entry until the stop file appears, then prints "writes N GAVEUP" (GAVEUP:
// writes that met vault.CASAttempts conflicts in a row).
func TestInPlaceRaceHelperProcess(t *testing.T) {
	g := os.Getenv(raceHelperEnv)
	if g == "" {
		return
	}
	v, err := vault.Open(os.Getenv(raceHelperVault))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	m, err := OpenMemory(v, "lyra", TargetMemory)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	prefix := "agent-p" + g + "-"
	n, gaveUp := 0, 0
	for j := 1; ; j++ {
		if _, err := os.Stat(os.Getenv(raceHelperStop)); err == nil {
			break
		}
		entry := fmt.Sprintf("%s%06d", prefix, j)
		_, err := m.Apply(Op{Action: ActionReplace, OldText: prefix, Content: entry})
		if errors.Is(err, ErrNoMatch) {
			_, err = m.Apply(Op{Action: ActionAdd, Content: entry})
		}
		if errors.Is(err, vault.ErrConflict) {
			gaveUp++
			continue
		}
		if err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		n++
	}
	fmt.Println("writes", n, gaveUp)
	os.Exit(0)
}

// raceMemoryProcesses is raceMemory with the agents in other processes.
func raceMemoryProcesses(t *testing.T, saves, procs int) {
	v := memTestVault(t, 1_000_000, 0)
	m := memOpen(t, v, TargetMemory)
	if _, err := m.Apply(Op{Action: ActionAdd, Content: personMarker(0)}); err != nil {
		t.Fatal(err)
	}
	stopFile := filepath.Join(t.TempDir(), "stop")
	rep := &raceReport{}
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for g := 0; g < procs; g++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestInPlaceRaceHelperProcess$")
		cmd.Env = append(os.Environ(), raceHelperEnv+"="+strconv.Itoa(g), raceHelperVault+"="+v.Root(), raceHelperStop+"="+stopFile)
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	stop := func() {
		os.WriteFile(stopFile, nil, 0o644)
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Errorf("agent process %d: %v\n%s", i, err, outs[i])
			}
			var n, gaveUp int64
			if _, err := fmt.Sscanf(strings.TrimSpace(outs[i].String()[strings.LastIndex(outs[i].String(), "writes"):]), "writes %d %d", &n, &gaveUp); err == nil {
				rep.agentWrites.Add(n)
				rep.agentGaveUp.Add(gaveUp)
			}
		}
	}
	edit := func(data, prev, next string) string {
		es := ParseEntries([]byte(data))
		found := false
		for i, e := range es {
			if strings.HasPrefix(e, "person-") {
				es[i], found = next, true
			}
		}
		if !found {
			es = append(es, next)
		}
		return string(FormatEntries(es))
	}
	// Let the processes start writing before the saves begin.
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(m.path); strings.Count(string(b), "agent-p") >= procs {
			break
		}
	}
	runPersonSaves(t, m.path, saves, edit, rep, stop)
	rep.check(t, "MEMORY.md (agent processes)", v.MustPath(HomePath("lyra", "")))
}

// TestInPlaceSavesRacingMemoryProcesses: 0 of inPlaceSaves saves of
// MEMORY.md overwritten by two agent processes writing it meanwhile.
func TestInPlaceSavesRacingMemoryProcesses(t *testing.T) {
	raceMemoryProcesses(t, inPlaceSaves, 2)
}
