//go:build openclaw

package examples

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestOpenClawTurnCost measures what the Nexus plugin adds to an OpenClaw
// turn, side by side with the same turn without it: 'openclaw agent
// --local' (one process per turn, as OpenClaw runs it from a shell) with
// the scripted model on loopback, the plugin disabled, over the CLI, and
// over the hub (started on demand by an untimed first turn). Before each
// turn lyra appends an entry (untimed) for the plugin to bring. The setups
// take turns, so load moves them alike.
//
// Off unless NEXUS_BENCH_TURNS is set (turns per setup):
//
//	NEXUS_BENCH_TURNS=50 OPENCLAW_BIN=... NODE24_DIR=... go test -tags openclaw -run TurnCost -v ./examples
func TestOpenClawTurnCost(t *testing.T) {
	turns, _ := strconv.Atoi(os.Getenv("NEXUS_BENCH_TURNS"))
	if turns <= 0 {
		t.Skip("NEXUS_BENCH_TURNS not set")
	}
	ocBin, env := openclawEnv(t)
	bin := buildNexus(t)
	model := &scriptedModel{reply: "Done."}
	srv := httptest.NewServer(model)
	defer srv.Close()
	type setup struct {
		name   string
		config map[string]any // nil: the plugin disabled
		home   string
		vault  string
		times  []float64
		cpu    time.Duration
	}
	setups := []*setup{
		{name: "no Nexus (plugin disabled)"},
		{name: "Nexus plugin over the CLI", config: map[string]any{"bin": bin}},
		{name: "Nexus plugin over the hub", config: map[string]any{"bin": bin, "hub": true}},
	}
	for _, s := range setups {
		s.home, s.vault = t.TempDir(), newVault(t, bin)
		cfg := map[string]any{"vault": s.vault, "agent": "ella", "timeoutMs": 20000}
		for k, v := range s.config {
			cfg[k] = v
		}
		writeOpenClawConfig(t, s.home, srv.URL, cfg, map[string]any{})
		if s.config == nil {
			file := filepath.Join(s.home, ".openclaw", "openclaw.json")
			var doc map[string]any
			data, _ := os.ReadFile(file)
			json.Unmarshal(data, &doc)
			doc["plugins"].(map[string]any)["entries"].(map[string]any)["nexus"].(map[string]any)["enabled"] = false
			data, _ = json.Marshal(doc)
			os.WriteFile(file, data, 0o600)
		}
		openclawTurn(t, ocBin, env, s.home, "Warm up") // untimed: caches, and the hub's start
	}
	t.Cleanup(func() {
		for _, s := range setups {
			var hub struct{ PID int }
			if data, err := os.ReadFile(filepath.Join(s.vault, ".nexus", "state", "hub", "serve.json")); err == nil && json.Unmarshal(data, &hub) == nil && hub.PID > 0 {
				if p, err := os.FindProcess(hub.PID); err == nil {
					p.Signal(os.Interrupt)
				}
			}
		}
	})
	for i := 0; i < turns; i++ {
		for _, s := range setups {
			nexus(t, bin, "--vault", s.vault, "--agent", "lyra", "log", "append", fmt.Sprintf("LYRA-B%d staging note", i))
			ms, cpu := openclawTurn(t, ocBin, env, s.home, fmt.Sprintf("Turn %d: what changed on staging?", i))
			t.Logf("%s, turn %d: %.1f ms, CPU %s", s.name, i, ms, cpu)
			s.times = append(s.times, ms)
			s.cpu += cpu
		}
	}
	base := setups[0]
	for _, s := range setups {
		logTurnCost(t, s.name, s.times, base.times, s.cpu, len(s.times))
		if s.config != nil {
			if got := len(logEntries(t, bin, s.vault, "ella")); got != turns+1 {
				t.Errorf("%s: %d turns recorded, want %d", s.name, got, turns+1)
			}
		}
	}
}

// openclawTurn runs one 'openclaw agent --local' turn and returns its
// wall time in ms and its CPU time (the process and the children it
// waited for).
func openclawTurn(t *testing.T, bin string, env []string, home, message string) (float64, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "agent", "--local", "--message", message)
	cmd.Env = append(env, "OPENCLAW_HOME="+home)
	cmd.Dir = home
	start := time.Now()
	out, err := cmd.CombinedOutput()
	ms := float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		t.Fatalf("openclaw agent --local: %v\n%s", err, out)
	}
	return ms, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}
