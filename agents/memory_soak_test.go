//go:build soak

package agents

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMemorySoak runs the multi-process checks for longer: 16 processes
// adding while others are SIGKILLed in their write loops, many rounds.
//
//	go test -tags soak ./agents/ -run TestMemorySoak -v
func TestMemorySoak(t *testing.T) {
	const rounds, adders, count = 60, 16, 20
	v := memTestVault(t, 1_000_000, 0)
	m := memOpen(t, v, TargetMemory)
	if _, err := m.Apply(add("base entry")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for p := range adders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := memHelper(v, "add", fmt.Sprintf("s%d", p), count).Output()
			if err != nil || strings.Contains(string(out), "error") {
				t.Errorf("adder %d: %v\n%s", p, err, out)
			}
		}()
	}
	for r := range rounds {
		cmd := memHelper(v, "loop", "k"+strconv.Itoa(r), 0)
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		sc.Scan()
		time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		data, _ := memRead(t, m)
		if string(FormatEntries(ParseEntries([]byte(data)))) != data || !strings.Contains(data, "base entry") {
			t.Fatalf("round %d: file torn or base entry lost: %q", r, data)
		}
	}
	wg.Wait()
	data, _ := memRead(t, m)
	seen := map[string]int{}
	for _, e := range ParseEntries([]byte(data)) {
		seen[e]++
	}
	for p := range adders {
		for i := range count {
			if name := fmt.Sprintf("s%d-entry-%02d", p, i); seen[name] != 1 {
				t.Errorf("%s present %d times", name, seen[name])
			}
		}
	}
}
