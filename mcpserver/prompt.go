package mcpserver

import (
	"context"

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
	text, err := s.sessionStart(ctx, agent)
	if err != nil {
		return nil, err
	}
	return mcp.NewGetPromptResult("Session start for "+agent, []mcp.PromptMessage{
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text)),
	}), nil
}

// sessionStart returns agent's session-start render, taken once per MCP
// session: writes made during the session land on disk at once and show in
// tool results, but not in that session's snapshot (SPEC §2). A new session
// (a reconnect, a new stdio process) gets a fresh one.
func (s *Server) sessionStart(ctx context.Context, agent string) (string, error) {
	id := ""
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		id = cs.SessionID()
	}
	if id != "" {
		if text, ok := s.frozen.Load(id); ok {
			return text.(string), nil
		}
	}
	text, err := agents.RenderSessionStart(s.vault(), agent)
	if err != nil || id == "" {
		if err == nil {
			agents.RecordSessionStart(s.vault(), agent, "mcp")
		}
		return text, err
	}
	got, loaded := s.frozen.LoadOrStore(id, text)
	if !loaded {
		agents.RecordSessionStart(s.vault(), agent, "mcp") // a recall signal (docs/curation.md)
	}
	return got.(string), nil
}
