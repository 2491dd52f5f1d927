package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-memory/nexus/mcpserver"
	"github.com/nexus-memory/nexus/vault"
)

// specTools are the tool names of SPEC §6, with whether each is read-only
// and whether it is marked destructive.
var specTools = map[string]struct{ readOnly, destructive bool }{
	"memory":          {false, true},
	"fact_write":      {false, true}, // update true overwrites
	"fact_read":       {true, false},
	"fact_remove":     {false, true},
	"memory_search":   {true, false},
	"memory_get":      {true, false},
	"memory_links":    {true, false},
	"log_read":        {false, false},
	"log_append":      {false, false},
	"decision_record": {false, false},
	"decision_list":   {true, false},
	"checkpoint_save": {false, false},
	"checkpoint_load": {true, false},
	"retain":          {false, false},
}

func checkListings(t *testing.T, cs *sdk.ClientSession, v *vault.Vault) {
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		want, ok := specTools[tl.Name]
		if !ok {
			t.Errorf("tool %q is not in SPEC §6", tl.Name)
			continue
		}
		if tl.Annotations == nil || tl.Annotations.ReadOnlyHint != want.readOnly {
			t.Errorf("tool %s: readOnlyHint wrong: %+v", tl.Name, tl.Annotations)
		}
		if tl.Annotations != nil && !want.readOnly && (tl.Annotations.DestructiveHint == nil || *tl.Annotations.DestructiveHint != want.destructive) {
			t.Errorf("tool %s: destructiveHint wrong, want %v", tl.Name, want.destructive)
		}
		if len(tl.Description) < 80 {
			t.Errorf("tool %s: description too thin for a model: %q", tl.Name, tl.Description)
		}
		schema, _ := tl.InputSchema.(map[string]any)
		if schema["type"] != "object" {
			t.Errorf("tool %s: input schema is not an object: %v", tl.Name, tl.InputSchema)
		}
		if props, _ := schema["properties"].(map[string]any); props["agent"] != nil && tl.Name != "fact_read" && tl.Name != "decision_list" && tl.Name != "memory_search" {
			t.Errorf("tool %s takes an agent argument; the agent comes from the transport", tl.Name)
		}
	}
	for must := range specTools {
		if !slices.Contains(names, must) {
			t.Errorf("tools/list lacks %s: %v", must, names)
		}
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "session_start" {
		t.Errorf("prompts: %+v", prompts.Prompts)
	}
	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
		if strings.Contains(r.URI, ".nexus") {
			t.Errorf("resource list exposes %s", r.URI)
		}
	}
	for _, want := range []string{mcpserver.LiveLogURI, mcpserver.SessionStartURI, mcpserver.NoteURI("projects/atlas plan.md"), mcpserver.NoteURI("agents/lyra/IDENTITY.md")} {
		if !slices.Contains(uris, want) {
			t.Errorf("resources lack %s: %v", want, uris)
		}
	}
	rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: mcpserver.NoteURI("projects/atlas plan.md")})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "아틀라스") {
		t.Errorf("read resource: %+v", rr.Contents)
	}
	for _, bad := range []string{"nexus://vault/.nexus/keys/lyra.key", "nexus://vault/..%2F..%2Fetc%2Fpasswd", "nexus://vault/.nexus/config.yaml"} {
		if r, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: bad}); err == nil {
			t.Errorf("read %s succeeded: %+v", bad, r.Contents)
		}
	}
	p, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "session_start"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Messages) != 1 {
		t.Fatalf("session_start: %+v", p)
	}
	tc, ok := p.Messages[0].Content.(*sdk.TextContent)
	if !ok || !strings.Contains(tc.Text, "lyra") {
		t.Fatalf("session_start text: %+v", p.Messages[0].Content)
	}
	sr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: mcpserver.SessionStartURI})
	if err != nil {
		t.Fatal(err)
	}
	if len(sr.Contents) != 1 || sr.Contents[0].Text != tc.Text {
		t.Errorf("session start resource differs from the prompt:\n%+v", sr.Contents)
	}
}

// exerciseTools calls every tool as lyra and checks results and files.
func exerciseTools(t *testing.T, cs *sdk.ClientSession, v *vault.Vault) {
	// Facts.
	f := mustOK(t, cs, "fact_write", map[string]any{"name": "Coffee order", "description": "how the user takes coffee", "type": "user", "body": "Black, no sugar. 설탕 없이."})
	if f["path"] != "agents/lyra/memory/coffee-order.md" {
		t.Fatalf("fact_write path: %v", f)
	}
	data, err := os.ReadFile(filepath.Join(v.Root(), "agents/lyra/memory/coffee-order.md"))
	if err != nil || !strings.Contains(string(data), "설탕 없이") {
		t.Fatalf("fact file: %v %q", err, data)
	}
	mustFail(t, cs, "fact_write", map[string]any{"name": "Coffee order", "description": "again", "type": "user", "body": "x"}, "already exists", "update")
	got := mustOK(t, cs, "fact_read", map[string]any{"slug": "coffee-order"})
	if !strings.Contains(got["body"].(string), "Black") {
		t.Errorf("fact_read: %v", got)
	}
	list := mustOK(t, cs, "fact_read", nil)
	if facts, _ := list["facts"].([]any); len(facts) != 1 {
		t.Errorf("fact_read list: %v", list)
	}
	// memory_get, whole and ranged.
	g := mustOK(t, cs, "memory_get", map[string]any{"path": "projects/atlas plan.md", "from": 2, "lines": 1})
	if g["text"] != "아틀라스 is the launch.\n" || g["total_lines"] != float64(3) {
		t.Errorf("memory_get range: %v", g)
	}
	g = mustOK(t, cs, "memory_get", map[string]any{"path": "agents/lyra/memory/coffee-order.md"})
	if !strings.Contains(g["text"].(string), "Black") {
		t.Errorf("memory_get fact: %v", g)
	}
	exerciseMemory(t, cs, v)
	exerciseLog(t, cs, v)
	exerciseSearch(t, cs)
	// Remove archives.
	rm := mustOK(t, cs, "fact_remove", map[string]any{"slug": "coffee-order"})
	arch, _ := rm["archived"].(string)
	if !strings.HasPrefix(arch, "review/archive/") {
		t.Fatalf("fact_remove: %v", rm)
	}
	if _, err := os.Stat(filepath.Join(v.Root(), filepath.FromSlash(arch))); err != nil {
		t.Errorf("archived fact missing: %v", err)
	}
	if _, err := os.Stat(filepath.Join(v.Root(), "agents/lyra/memory/coffee-order.md")); !os.IsNotExist(err) {
		t.Errorf("removed fact still in place: %v", err)
	}
}

func seedNotes(t *testing.T, v *vault.Vault) {
	mustWrite(t, v, "projects/atlas plan.md", "# Atlas\n아틀라스 is the launch.\nShip by Friday.\n")
}

func TestStdioEndToEnd(t *testing.T) {
	v := mustVault(t, "lyra", "ella")
	seedNotes(t, v)
	cs := connectStdio(t, v, "lyra", nil)
	checkListings(t, cs, v)
	exerciseTools(t, cs, v)
}

func TestHTTPEndToEnd(t *testing.T) {
	for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
		t.Run("protocol="+version, func(t *testing.T) {
			v := mustVault(t, "lyra", "ella")
			seedNotes(t, v)
			_, url, tokens := startServer(t, v, "lyra", "ella")
			cs := connectHTTP(t, url, tokens["lyra"], version, nil)
			checkListings(t, cs, v)
			exerciseTools(t, cs, v)
		})
	}
}

func TestStdioNeedsKnownAgent(t *testing.T) {
	v := mustVault(t, "lyra")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv, err := mcpserver.New(mcpserver.Options{Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(ctx)
	for _, a := range []string{"ghost", "../lyra", ""} {
		if err := srv.ServeStdio(ctx, a, strings.NewReader(""), &strings.Builder{}); err == nil {
			t.Errorf("ServeStdio(%q) served", a)
		}
	}
}
