package mcpserver

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"

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
	text, err := agents.RenderSessionStart(s.vault(), agent)
	if err != nil {
		return nil, err
	}
	return mcp.NewGetPromptResult("Session start for "+agent, []mcp.PromptMessage{
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text)),
	}), nil
}
