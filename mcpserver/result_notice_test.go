package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStructuredResultTextWithNotice: with an unread notice added to the
// structured content, the text copy still equals it in the form
// JSON.stringify(value, null, 2) writes (else OpenClaw's MCP bridge sends
// the whole result twice), and the notice stays a text block of its own.
func TestStructuredResultTextWithNotice(t *testing.T) {
	v := mustVault(t, "lyra", "ella")
	mustOK(t, connectStdio(t, v, "ella", nil), "log_append", map[string]any{"summary": "ella's news"})
	res := callTool(t, connectStdio(t, v, "lyra", nil), "decision_list", map[string]any{})
	ts := texts(res)
	if res.IsError || len(ts) < 2 || !strings.Contains(ts[len(ts)-1], "new log entr") {
		t.Fatalf("no unread notice block: %q", ts)
	}
	sc, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := json.Unmarshal(sc, &want); err != nil {
		t.Fatal(err)
	}
	if _, ok := want.(map[string]any)["unread_notice"]; !ok {
		t.Fatalf("no unread_notice in the structured content: %s", sc)
	}
	var got any
	if err := json.Unmarshal([]byte(ts[0]), &got); err != nil {
		t.Fatalf("the text copy is not JSON: %v\n%s", err, ts[0])
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) || !strings.Contains(ts[0], "\n  \"unread_notice\": {\n") {
		t.Errorf("the text copy differs from the structured content:\ntext: %s\nstructured: %s", ts[0], sc)
	}
}
