package agents

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// Environment of the helper process (see TestMemoryHelperProcess).
const (
	memHelperEnv    = "NEXUS_TEST_MEMORY_HELPER" // "add" or "loop"
	memHelperVault  = "NEXUS_TEST_MEMORY_VAULT"
	memHelperPrefix = "NEXUS_TEST_MEMORY_PREFIX"
	memHelperCount  = "NEXUS_TEST_MEMORY_COUNT"
)

// TestMemoryHelperProcess is not a test: the multi-process tests re-execute
// the test binary with it to get separate OS processes writing one file.
//
//	add:  add COUNT entries PREFIX-i, printing "ok NAME" or "refused NAME"
//	loop: add and remove entries forever (until killed), after "ready"
func TestMemoryHelperProcess(t *testing.T) {
	mode := os.Getenv(memHelperEnv)
	if mode == "" {
		return
	}
	v, err := vault.Open(os.Getenv(memHelperVault))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	m, err := OpenMemory(v, "lyra", TargetMemory)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	prefix := os.Getenv(memHelperPrefix)
	switch mode {
	case "add":
		n, _ := strconv.Atoi(os.Getenv(memHelperCount))
		for i := range n {
			name := fmt.Sprintf("%s-entry-%02d", prefix, i)
			_, err := m.Apply(add(name))
			switch {
			case err == nil:
				fmt.Println("ok", name)
			case errors.Is(err, ErrOverLimit):
				fmt.Println("refused", name)
			default:
				fmt.Println("error", name, err)
			}
		}
		os.Exit(0)
	case "loop":
		for k := 0; ; k++ {
			item := fmt.Sprintf("item-%s-%d", prefix, k)
			if _, err := m.Apply(add(item)); err != nil {
				fmt.Println("error", err)
				os.Exit(3)
			}
			if k == 0 {
				fmt.Println("ready")
			}
			if _, err := m.Apply(replace("base entry", fmt.Sprintf("base entry v%d", k))); err != nil {
				fmt.Println("error", err)
				os.Exit(3)
			}
			if _, err := m.Apply(remove(item)); err != nil {
				fmt.Println("error", err)
				os.Exit(3)
			}
		}
	}
	os.Exit(2)
}

func memHelper(v *vault.Vault, mode, prefix string, count int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryHelperProcess$")
	cmd.Env = append(os.Environ(),
		memHelperEnv+"="+mode,
		memHelperVault+"="+v.Root(),
		memHelperPrefix+"="+prefix,
		memHelperCount+"="+strconv.Itoa(count))
	return cmd
}

// memRunAdders runs procs processes adding count entries each, at once, and
// returns every output line.
func memRunAdders(t *testing.T, v *vault.Vault, procs, count int) []string {
	t.Helper()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		lines []string
	)
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := memHelper(v, "add", fmt.Sprintf("p%d", p), count).Output()
			if err != nil {
				t.Errorf("process %d: %v\n%s", p, err, out)
			}
			mu.Lock()
			lines = append(lines, strings.Split(strings.TrimSpace(string(out)), "\n")...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return lines
}

func TestMemoryEightProcessesLargeLimit(t *testing.T) {
	const procs, count = 8, 12
	v := memTestVault(t, 1_000_000, 0)
	lines := memRunAdders(t, v, procs, count)
	m := memOpen(t, v, TargetMemory)
	data, _ := memRead(t, m)
	entries := ParseEntries([]byte(data))
	if string(FormatEntries(entries)) != data {
		t.Fatalf("file is not in canonical form")
	}
	seen := map[string]int{}
	for _, e := range entries {
		seen[e]++
	}
	for p := range procs {
		for i := range count {
			name := fmt.Sprintf("p%d-entry-%02d", p, i)
			if seen[name] != 1 {
				t.Errorf("%s present %d times, want exactly once", name, seen[name])
			}
		}
	}
	if len(entries) != procs*count {
		t.Errorf("%d entries, want %d", len(entries), procs*count)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "ok ") {
			t.Errorf("unexpected output %q", l)
		}
	}
}

func TestMemoryEightProcessesSmallLimit(t *testing.T) {
	const procs, count, limit = 8, 8, 300
	v := memTestVault(t, limit, 0)
	lines := memRunAdders(t, v, procs, count)
	m := memOpen(t, v, TargetMemory)
	data, _ := memRead(t, m)
	entries := ParseEntries([]byte(data))
	if n := CharCount(entries); n > limit {
		t.Fatalf("file holds %d chars, over the limit %d", n, limit)
	}
	present := map[string]bool{}
	for _, e := range entries {
		if present[e] {
			t.Errorf("%s present twice", e)
		}
		present[e] = true
	}
	ok, refusedN := 0, 0
	for _, l := range lines {
		status, name, _ := strings.Cut(l, " ")
		switch status {
		case "ok":
			ok++
			if !present[name] {
				t.Errorf("%s reported added but is not in the file", name)
			}
		case "refused":
			refusedN++
			if present[name] {
				t.Errorf("%s reported refused but is in the file", name)
			}
		default:
			t.Errorf("unexpected output %q", l)
		}
	}
	if ok+refusedN != procs*count {
		t.Errorf("%d ok + %d refused, want %d reports", ok, refusedN, procs*count)
	}
	if ok != len(entries) {
		t.Errorf("%d reported added, %d in the file", ok, len(entries))
	}
	if refusedN == 0 {
		t.Errorf("no add was refused: the test did not reach the limit")
	}
	// The file was filled to within one entry of the limit: the next
	// entry (14 chars with its separator) did not fit.
	if CharCount(entries)+len("\n§\np0-entry-00") <= limit {
		t.Errorf("file holds only %d chars though adds were refused", CharCount(entries))
	}
}

func TestMemorySIGKILLNeverTearsTheFile(t *testing.T) {
	rounds := 12
	if testing.Short() {
		rounds = 4
	}
	v := memTestVault(t, 100_000, 0)
	m := memOpen(t, v, TargetMemory)
	if _, err := m.Apply(add("base entry")); err != nil {
		t.Fatal(err)
	}
	for r := range rounds {
		cmd := memHelper(v, "loop", strconv.Itoa(r), 0)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		if !sc.Scan() || sc.Text() != "ready" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: helper said %q", r, sc.Text())
		}
		// Let it write for a little while, then kill it mid-loop.
		time.Sleep(time.Duration(rand.IntN(15)) * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()

		data, exists := memRead(t, m)
		if !exists || data == "" {
			t.Fatalf("round %d: MEMORY.md is missing or empty", r)
		}
		entries := ParseEntries([]byte(data))
		if string(FormatEntries(entries)) != data {
			t.Fatalf("round %d: file is torn or not canonical: %q", r, data)
		}
		base := 0
		for _, e := range entries {
			switch {
			case strings.HasPrefix(e, "base entry"):
				base++
			case strings.HasPrefix(e, "item-"):
			default:
				t.Fatalf("round %d: unexpected entry %q", r, e)
			}
		}
		if base != 1 {
			t.Fatalf("round %d: %d base entries, want 1: %q", r, base, entries)
		}
	}
	if baks, _ := filepath.Glob(m.path + ".bak-*"); len(baks) != 0 {
		t.Errorf("crash left a file that needed a backup: %v", baks)
	}
}
