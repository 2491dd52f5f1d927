//go:build claudecode

package examples

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// TestClaudeCodeTurnCost measures what the Nexus hooks add to a Claude
// Code turn, side by side with the same turn without them: one session
// per setup (claude -p with stream-json input, so the turns share one
// process, as in an interactive session), the scripted model on loopback,
// and before each turn lyra appends an entry (untimed) for the hooks to
// bring. A turn is timed from writing the user's message to Claude Code's
// result. The setups take turns in rounds, so load moves them alike.
//
// Off unless NEXUS_BENCH_TURNS is set (turns per setup):
//
//	NEXUS_BENCH_TURNS=100 CLAUDE_BIN=... go test -tags claudecode -run TurnCost -v ./examples
func TestClaudeCodeTurnCost(t *testing.T) {
	turns, _ := strconv.Atoi(os.Getenv("NEXUS_BENCH_TURNS"))
	if turns <= 0 {
		t.Skip("NEXUS_BENCH_TURNS not set")
	}
	bin := buildNexus(t)
	model := &anthropicModel{reply: "Done."}
	srv := httptest.NewServer(model)
	defer srv.Close()
	type setup struct {
		name    string
		install []string // nil: no Nexus
		cc      *claudeCode
		times   []float64
		cpu     time.Duration // of the sessions' processes, start-up included
	}
	setups := []*setup{
		{name: "no Nexus"},
		{name: "Nexus, mcp_tool hooks (default)", install: []string{}},
		{name: "Nexus, command hooks (--command-hooks)", install: []string{"--command-hooks"}},
	}
	var vaults []string
	for _, s := range setups {
		vault := newVault(t, bin)
		vaults = append(vaults, vault)
		s.cc = newClaudeCode(t, srv.URL)
		if s.install != nil {
			s.cc.install(t, append([]string{"--agent", "claude", "--vault", vault, "--bin", bin}, s.install...)...)
		}
	}
	const rounds = 5
	per := max(1, turns/rounds)
	for r := 0; r < rounds; r++ {
		for i, s := range setups {
			times, cpu := claudeSession(t, s.cc, bin, vaults[i], per)
			s.times = append(s.times, times...)
			s.cpu += cpu
		}
	}
	base := setups[0]
	for i, s := range setups {
		logTurnCost(t, s.name, s.times, base.times, s.cpu, rounds*(per+1))
		// The hooks did their work: every turn (warm-ups too) is in the log.
		if want := 0; s.install != nil {
			want = rounds * (per + 1)
			if got := len(entriesOf(t, bin, vaults[i], "claude")); got != want {
				t.Errorf("%s: %d turns recorded, want %d", s.name, got, want)
			}
		}
	}
}

// claudeSession runs one Claude Code session of n timed turns after one
// untimed (the session's start) and returns each turn's time in ms and the
// CPU time of the session's processes (Claude Code and the children it
// waited for).
func claudeSession(t *testing.T, c *claudeCode, bin, vault string, n int) ([]float64, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
	cmd.Env = c.env
	cmd.Dir = c.project
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	defer func() {
		if !done {
			in.Close()
			cmd.Wait()
		}
	}()
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 64<<20)
	var times []float64
	for i := -1; i < n; i++ {
		nexus(t, bin, "--vault", vault, "--agent", "lyra", "log", "append", fmt.Sprintf("LYRA-B%d staging note", i))
		msg, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": fmt.Sprintf("Turn %d: what changed on staging?", i)}})
		start := time.Now()
		fmt.Fprintf(in, "%s\n", msg)
		for {
			if !sc.Scan() {
				t.Fatalf("claude ended before turn %d's result: %v", i, sc.Err())
			}
			var m struct {
				Type    string `json:"type"`
				IsError bool   `json:"is_error"`
			}
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.Type == "result" {
				if m.IsError {
					t.Fatalf("turn %d: %s", i, sc.Text())
				}
				break
			}
		}
		if i >= 0 {
			times = append(times, float64(time.Since(start).Microseconds())/1000)
		}
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("claude: %v", err)
	}
	done = true
	return times, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}
