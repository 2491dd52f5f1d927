package mcpserver

import (
	"context"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/nexus-memory/nexus/agents"
)

func (s *Server) addPrompts() {
	s.mcp.AddPrompt(mcp.NewPrompt("session_start",
		mcp.WithPromptTitle("Session start: your frozen memory snapshot"),
		mcp.WithPromptDescription("Your identity, bounded memory (MEMORY, USER), memory index, unread live-log entries, latest checkpoint and current decisions — the same text as 'nexus prompt'. Load it once at the start of a session."),
	), s.sessionStartPrompt)
}

func (s *Server) sessionStartPrompt(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	agent, ok := agentFrom(ctx)
	if !ok {
		return nil, ErrNoAgent
	}
	text, frozen, err := s.sessionStart(ctx, agent)
	if err != nil {
		return nil, err
	}
	desc := "Session start for " + agent
	if !frozen {
		desc += " (" + snapshotNote + ")"
	}
	return mcp.NewGetPromptResult(desc, []mcp.PromptMessage{
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text)),
	}), nil
}

// sessionStart returns agent's session-start render, taken once per MCP
// session: writes made during the session land on disk at once and show in
// tool results, but not in that session's snapshot (SPEC §2). A new session
// (a reconnect, a new stdio process) gets a fresh one. Stateless requests
// (protocol 2026-07-28) are keyed by their snapshot key (snapshotkey.go).
// frozen is false when nothing identifies the session, so the render was
// taken for this request alone.
func (s *Server) sessionStart(ctx context.Context, agent string) (text string, frozen bool, err error) {
	id := ""
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		id = cs.SessionID()
	}
	if key := snapshotKeyFrom(ctx); key != "" {
		id = key
	}
	if id != "" {
		if got, ok := s.frozen.Load(id); ok {
			return got.(frozenRender).text, true, nil
		}
	}
	text, err = agents.RenderSessionStart(s.vault(), agent)
	if err != nil || id == "" {
		if err == nil {
			agents.RecordSessionStart(s.vault(), agent, "mcp")
		}
		return text, false, err
	}
	now := time.Now()
	s.sweepFrozen(now)
	got, loaded := s.frozen.LoadOrStore(id, frozenRender{text: text, at: now})
	if !loaded {
		agents.RecordSessionStart(s.vault(), agent, "mcp") // a recall signal (docs/curation.md)
	}
	return got.(frozenRender).text, true, nil
}
