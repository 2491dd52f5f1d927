package mcpserver

import (
	"context"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
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
	text, err := s.sessionStart(agent)
	if err != nil {
		return nil, err
	}
	return mcp.NewGetPromptResult("Session start for "+agent, []mcp.PromptMessage{
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text)),
	}), nil
}

// sessionStart renders the session-start text for agent.
func (s *Server) sessionStart(agent string) (string, error) {
	id, err := identity.Load(s.v, agent)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(strings.TrimSpace(id.Body))
	b.WriteString("\n")
	if idx, err := agents.RenderIndex(s.v, agent); err == nil && strings.TrimSpace(idx) != "" {
		b.WriteString("\n" + strings.TrimRight(idx, "\n") + "\n")
	}
	return b.String(), nil
}
