package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func promptText(t *testing.T, cs *sdk.ClientSession) string {
	t.Helper()
	p, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: "session_start"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range p.Messages {
		if tc, ok := m.Content.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestSessionStartFrozenOverHTTP(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol="+version, func(t *testing.T) {
			v := mustVault(t, "lyra")
			_, url, tokens := startServer(t, v, "lyra")
			cs := connectHTTP(t, url, tokens["lyra"], version, nil)
			t.Logf("negotiated %s", cs.InitializeResult().ProtocolVersion)
			first := promptText(t, cs)
			mustOK(t, cs, "memory", map[string]any{"action": "add", "content": "written mid-session"})
			second := promptText(t, cs)
			if first != second {
				t.Errorf("session_start changed within the session:\n--- first\n%s\n--- second\n%s", first, second)
			}
			p, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: "session_start"})
			if err != nil || strings.Contains(p.Description, "taken now") {
				t.Errorf("a frozen session_start says it is not: %v %q", err, p.Description)
			}
			// A new connection is a new session: it sees the write.
			fresh := connectHTTP(t, url, tokens["lyra"], version, nil)
			if got := promptText(t, fresh); !strings.Contains(got, "written mid-session") {
				t.Errorf("a new session's session_start lacks the write:\n%s", got)
			}
			if got := promptText(t, cs); got != first {
				t.Errorf("the first session's snapshot changed after another session began")
			}
		})
	}
}
