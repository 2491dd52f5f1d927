package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-memory/nexus/mcpserver"
	"github.com/nexus-memory/nexus/vault"
)

func readFile(t *testing.T, v *vault.Vault, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(v.Root(), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatalf("read %s: %v", rel, err)
	}
	return string(b)
}

func exerciseMemory(t *testing.T, cs *sdk.ClientSession, v *vault.Vault) {
	r := mustOK(t, cs, "memory", map[string]any{"action": "add", "content": "The build runs with make ci."})
	if r["success"] != true || r["entry_count"] != float64(1) || !strings.Contains(r["usage"].(string), "/2,200 chars") {
		t.Fatalf("memory add: %v", r)
	}
	mustOK(t, cs, "memory", map[string]any{"action": "add", "target": "user", "content": "사용자는 한국어로 답을 원한다."})
	if got := readFile(t, v, "agents/lyra/USER.md"); !strings.Contains(got, "사용자는 한국어로") {
		t.Fatalf("USER.md: %q", got)
	}
	r = mustOK(t, cs, "memory", map[string]any{"operations": []any{
		map[string]any{"action": "add", "content": "Deploys happen on Tuesdays."},
		map[string]any{"action": "replace", "old_text": "make ci", "content": "The build runs with make ci-all."},
	}})
	if r["entry_count"] != float64(2) {
		t.Fatalf("batch: %v", r)
	}
	mem := readFile(t, v, "agents/lyra/MEMORY.md")
	if mem != "The build runs with make ci-all.\n§\nDeploys happen on Tuesdays." && mem != "The build runs with make ci-all.\n§\nDeploys happen on Tuesdays.\n" {
		t.Fatalf("MEMORY.md on disk: %q", mem)
	}
	// A failed batch writes nothing.
	mustFail(t, cs, "memory", map[string]any{"operations": []any{
		map[string]any{"action": "remove", "old_text": "Tuesdays"},
		map[string]any{"action": "remove", "old_text": "no such entry"},
	}}, "no such entry")
	if got := readFile(t, v, "agents/lyra/MEMORY.md"); got != mem {
		t.Fatalf("failed batch changed MEMORY.md: %q", got)
	}
	mustOK(t, cs, "memory", map[string]any{"action": "remove", "old_text": "Tuesdays"})
	if got := readFile(t, v, "agents/lyra/MEMORY.md"); strings.Contains(got, "Tuesdays") {
		t.Fatalf("remove left the entry: %q", got)
	}
	// Full memory: the error carries usage, size, limit and current entries.
	big := strings.Repeat("가", 1500)
	mustOK(t, cs, "memory", map[string]any{"action": "add", "content": big})
	msg := mustFail(t, cs, "memory", map[string]any{"action": "add", "content": strings.Repeat("나", 800)}, "2,200", "current_entries", "replace")
	if !strings.Contains(msg, "make ci-all") {
		t.Errorf("overflow error lacks the current entries: %s", msg)
	}
	mustOK(t, cs, "memory", map[string]any{"action": "remove", "old_text": "가가가"})
	// The snapshot is taken once per session (SPEC §2): a write made after
	// it lands on disk but not in this session's snapshot.
	snapshot := func() string {
		p, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: "session_start"})
		if err != nil {
			t.Fatal(err)
		}
		return p.Messages[0].Content.(*sdk.TextContent).Text
	}
	first := snapshot()
	mustOK(t, cs, "memory", map[string]any{"action": "add", "content": "Written after the snapshot."})
	if !strings.Contains(readFile(t, v, "agents/lyra/MEMORY.md"), "Written after the snapshot.") {
		t.Fatal("mid-session write not on disk")
	}
	// Over HTTP without a session id (the stateless 2026 protocol) the
	// server cannot tell sessions apart; stdio is checked in
	// TestSessionStartEqualsNexusPrompt.
	if again := snapshot(); cs.ID() != "" && (again != first || strings.Contains(again, "Written after the snapshot.")) {
		t.Errorf("session_start changed within the session:\n--- first\n%s\n--- again\n%s", first, again)
	}
	mustOK(t, cs, "memory", map[string]any{"action": "remove", "old_text": "Written after the snapshot."})
}

func exerciseLog(t *testing.T, cs *sdk.ClientSession, v *vault.Vault) {
	a := mustOK(t, cs, "log_append", map[string]any{"summary": "Started the atlas 배포", "body": "Details **here**.", "channel": "atlas", "kind": "status"})
	e := a["entry"].(map[string]any)
	if e["agent"] != "lyra" || e["channel"] != "atlas" || !strings.HasPrefix(e["segment"].(string), "log/live/") {
		t.Fatalf("log_append: %v", a)
	}
	if got := readFile(t, v, e["segment"].(string)); !strings.Contains(got, "Started the atlas 배포") {
		t.Fatalf("segment lacks the entry: %q", got)
	}
	lr, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: mcpserver.LiveLogURI})
	if err != nil {
		t.Fatal(err)
	}
	if len(lr.Contents) != 1 || !strings.Contains(lr.Contents[0].Text, "Started the atlas 배포") {
		t.Errorf("live log resource: %+v", lr.Contents)
	}
	// Own entries are never unread.
	r := mustOK(t, cs, "log_read", nil)
	if r["unread"] != true || r["count"] != float64(0) {
		t.Errorf("log_read unread after own append: %v", r)
	}
	r = mustOK(t, cs, "log_read", map[string]any{"last": 5})
	if r["count"] != float64(1) || r["unread"] != false {
		t.Errorf("log_read last: %v", r)
	}
	// Decisions.
	dev, err := v.Device()
	if err != nil {
		t.Fatal(err)
	}
	lyra := "lyra@" + dev
	d1 := mustOK(t, cs, "decision_record", map[string]any{"title": "Use Go", "decision": "All services in Go.", "rationale": "One toolchain."})
	if d1["id"] != lyra+":D-0001" || d1["agent"] != "lyra" {
		t.Fatalf("decision_record: %v", d1)
	}
	mustOK(t, cs, "decision_record", map[string]any{"title": "Use Go 1.26", "decision": "Pin Go 1.26.", "supersedes": lyra + ":D-0001"})
	mustFail(t, cs, "decision_record", map[string]any{"title": "x", "decision": "y", "supersedes": lyra + ":D-0099"}, "D-0099")
	l := mustOK(t, cs, "decision_list", nil)
	if ds := l["decisions"].([]any); len(ds) != 1 || ds[0].(map[string]any)["id"] != lyra+":D-0002" {
		t.Errorf("decision_list: %v", l)
	}
	l = mustOK(t, cs, "decision_list", map[string]any{"all": true})
	if ds := l["decisions"].([]any); len(ds) != 2 || ds[0].(map[string]any)["superseded_by"] != lyra+":D-0002" {
		t.Errorf("decision_list all: %v", l)
	}
	if got := readFile(t, v, "log/decisions/"+lyra+".md"); !strings.Contains(got, "Pin Go 1.26.") {
		t.Errorf("decision feed: %q", got)
	}
	// Checkpoints.
	c := mustOK(t, cs, "checkpoint_load", nil)
	if c["found"] != false {
		t.Errorf("checkpoint_load before any save: %v", c)
	}
	mustOK(t, cs, "checkpoint_save", map[string]any{"task": "Ship atlas", "state": "tests green", "next": "tag release", "files": []any{"a.go", "b.go"}})
	c = mustOK(t, cs, "checkpoint_load", nil)
	cp, _ := c["checkpoint"].(map[string]any)
	if c["found"] != true || cp["task"] != "Ship atlas" || len(cp["files"].([]any)) != 2 {
		t.Errorf("checkpoint_load: %v", c)
	}
	if got := readFile(t, v, "agents/lyra/checkpoints/CURRENT.md"); !strings.Contains(got, "tag release") {
		t.Errorf("CURRENT.md: %q", got)
	}
	// Retain files a pending review item.
	it := mustOK(t, cs, "retain", map[string]any{"name": "Release cadence", "description": "how often atlas ships", "type": "project", "body": "Every second Tuesday.", "source": "log 2026-11"})
	id, _ := it["id"].(string)
	if id == "" || it["status"] != "pending" {
		t.Fatalf("retain: %v", it)
	}
	if got := readFile(t, v, "review/pending/"+id+".md"); !strings.Contains(got, "Every second Tuesday.") || !strings.Contains(got, "lyra") {
		t.Errorf("pending item: %q", got)
	}
	many := mustOK(t, cs, "retain", map[string]any{"facts": []any{
		map[string]any{"name": "A fact", "description": "d", "type": "reference", "body": "b1"},
		map[string]any{"name": "B fact", "description": "d", "type": "feedback", "body": "b2"},
	}})
	if items := many["items"].([]any); len(items) != 2 {
		t.Errorf("retain batch: %v", many)
	}
}

// exerciseSearch waits for the index to catch up with the seeded note,
// then checks a ranked hit with both parameter spellings.
func exerciseSearch(t *testing.T, cs *sdk.ClientSession) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := mustOK(t, cs, "memory_search", map[string]any{"query": "아틀라스", "maxResults": 3})
		hits, _ := r["hits"].([]any)
		if len(hits) > 0 {
			h := hits[0].(map[string]any)
			if h["path"] != "projects/atlas plan.md" {
				t.Errorf("top hit: %v", h)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("memory_search never found the seeded note: %v", r)
		}
		time.Sleep(50 * time.Millisecond)
	}
	r := mustOK(t, cs, "memory_search", map[string]any{"query": "launch", "limit": 1, "min_score": 0.0, "path": "projects/"})
	if hits, _ := r["hits"].([]any); len(hits) != 1 {
		t.Errorf("memory_search with limit/path: %v", r)
	}
	mustFail(t, cs, "memory_search", map[string]any{"query": "x", "since": "last week"}, "since")
	// also: another phrasing finds what the query's words do not.
	r = mustOK(t, cs, "memory_search", map[string]any{"query": "qwertyuiop", "also": []any{"아틀라스"}})
	hits, _ := r["hits"].([]any)
	if len(hits) == 0 || hits[0].(map[string]any)["path"] != "projects/atlas plan.md" || fmt.Sprint(hits[0].(map[string]any)["via"]) != "[also]" {
		t.Errorf("memory_search with also: %v", r)
	}
	mustFail(t, cs, "memory_search", map[string]any{"query": "x", "also": []any{"a", "b", "c", "d", "e", "f", "g", "h", "i"}}, "also")
}
