package mcpserver_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestMemoryGetLargeNote: a note over the whole-read limit (search can point
// into one) is streamed: read by line range, or page by page.
func TestMemoryGetLargeNote(t *testing.T) {
	v := mustVault(t, "lyra")
	var b strings.Builder
	for i := 1; b.Len() <= 9<<20; i++ {
		fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", 90))
	}
	total := strings.Count(b.String(), "\n")
	os.MkdirAll(v.MustPath("projects"), 0o755) // init makes only .nexus/
	if err := os.WriteFile(v.MustPath("projects/huge.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := connectStdio(t, v, "lyra", nil)
	// Without a range it reads the first 2,000 lines and says where to go on.
	first := mustOK(t, cs, "memory_get", map[string]any{"path": "projects/huge.md"})
	if int(first["lines"].(float64)) != 2000 || int(first["next_from"].(float64)) != 2001 {
		t.Fatalf("first read: lines=%v next_from=%v", first["lines"], first["next_from"])
	}
	r := mustOK(t, cs, "memory_get", map[string]any{"path": "projects/huge.md", "from": 50000, "lines": 3})
	want := fmt.Sprintf("line 50000 %s\nline 50001 %[1]s\nline 50002 %[1]s\n", strings.Repeat("x", 90))
	if r["text"] != want || int(r["lines"].(float64)) != 3 || int(r["total_lines"].(float64)) != total {
		t.Fatalf("range read: lines=%v total=%v (want %d) text=%.60q", r["lines"], r["total_lines"], total, r["text"])
	}
}
