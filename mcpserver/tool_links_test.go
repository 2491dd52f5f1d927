package mcpserver_test

import (
	"os"
	"testing"
)

func TestMemoryLinks(t *testing.T) {
	v := mustVault(t, "lyra")
	os.MkdirAll(v.MustPath("people"), 0o755)
	files := map[string]string{
		"people/Ada Lovelace.md": "# Ada\n",
		"engine.md":              "---\nauthor: \"[[Ada Lovelace]]\"\n---\nSee [[ada lovelace#Life|her]], [[Babbage]] and [[Nowhere]].\n",
		"notes.md":               "one\ntwo [[People/Ada Lovelace]]\n",
	}
	for name, text := range files {
		if err := os.WriteFile(v.MustPath(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cs := connectStdio(t, v, "lyra", nil)
	r := mustOK(t, cs, "memory_links", map[string]any{"note": "Ada Lovelace"})
	if r["note"] != "people/Ada Lovelace.md" {
		t.Fatalf("note %v, want people/Ada Lovelace.md", r["note"])
	}
	back := r["backlinks"].([]any)
	want := []struct {
		from string
		line float64
	}{{"engine.md", 2}, {"engine.md", 4}, {"notes.md", 2}}
	if len(back) != len(want) || r["backlinks_total"].(float64) != 3 {
		t.Fatalf("backlinks %v, want %v", back, want)
	}
	for i, w := range want {
		b := back[i].(map[string]any)
		if b["from"] != w.from || b["line"] != w.line || b["path"] != "people/Ada Lovelace.md" {
			t.Errorf("backlink %d = %v, want %v", i, b, w)
		}
	}
	r = mustOK(t, cs, "memory_links", map[string]any{"note": "engine.md", "limit": 2})
	out := r["outgoing"].([]any)
	if len(out) != 2 || r["outgoing_total"].(float64) != 4 {
		t.Fatalf("outgoing %v (total %v), want 2 of 4", out, r["outgoing_total"])
	}
	if o := out[1].(map[string]any); o["sub"] != "Life" || o["shown"] != "her" || o["path"] != "people/Ada Lovelace.md" {
		t.Errorf("second link %v", o)
	}
	mustFail(t, cs, "memory_links", map[string]any{"note": "nobody here"}, "no file in the vault is named")
	mustFail(t, cs, "memory_links", map[string]any{"note": "x", "limit": 1001}, "limit")
}
