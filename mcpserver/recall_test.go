package mcpserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/curator"
)

// TestRecallSignalsOverMCP: a session start, fact_read, and a memory_get
// of a memory_search hit are recorded by the server process, the last with
// its query; and the memory tool tells an agent past the pressure
// threshold which curator proposal waits for a person.
func TestRecallSignalsOverMCP(t *testing.T) {
	v := mustVault(t, "lyra")
	if _, err := agents.WriteFact(v, "lyra", agents.FactInput{Name: "Staging SSH", Description: "port 2222", Type: agents.FactProject, Body: "Staging zebrafinch listens on 2222."}, time.Now()); err != nil {
		t.Fatal(err)
	}
	cs := connectStdio(t, v, "lyra", nil)
	ctx := context.Background()
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "session_start"}); err != nil {
		t.Fatal(err)
	}
	mustOK(t, cs, "fact_read", map[string]any{"slug": "staging-ssh"})
	path := agents.FactPath("lyra", "staging-ssh")
	for deadline := time.Now().Add(time.Minute); ; {
		r := mustOK(t, cs, "memory_search", map[string]any{"query": "zebrafinch"})
		if hits, _ := r["hits"].([]any); len(hits) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("search never found the fact")
		}
		time.Sleep(100 * time.Millisecond)
	}
	mustOK(t, cs, "memory_get", map[string]any{"path": path})
	var u agents.Use
	for deadline := time.Now().Add(10 * time.Second); ; {
		s, err := agents.LoadRecall(v)
		if err != nil {
			t.Fatal(err)
		}
		u = s.File(path)
		if u.Reads >= 2 && s.Session("lyra").Count == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("signals not recorded: %+v, sessions %+v", u, s.Session("lyra"))
		}
		time.Sleep(200 * time.Millisecond) // the server flushes within a second
	}
	if u.Reads != 2 || u.SearchReads != 1 || u.Queries["zebrafinch"] != 1 {
		t.Errorf("use = %+v", u)
	}

	// MEMORY.md past 80% with a spill proposal waiting: the memory tool's
	// result names it.
	m, _ := agents.OpenMemory(v, "lyra", agents.TargetMemory)
	for i := range 8 {
		if _, err := m.Apply(agents.Op{Action: agents.ActionAdd, Content: strings.Repeat("x", 200) + " note " + string(rune('a'+i)) + strings.Repeat(" staging waves", 4)}); err != nil {
			t.Fatal(err)
		}
	}
	pass, err := curator.Run(v, curator.PassOptions{Now: time.Now()})
	if err != nil || len(pass.Proposals) == 0 {
		t.Fatalf("pass: %+v %v", pass, err)
	}
	r := mustOK(t, cs, "memory", map[string]any{"action": "add", "content": "one more short note"})
	if n, _ := r["curator_notice"].(string); !strings.Contains(n, pass.Proposals[0].ID) {
		t.Errorf("memory result lacks the curator notice: %v", r)
	}
}
