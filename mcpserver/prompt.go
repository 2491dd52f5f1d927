package mcpserver

import (
	"context"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/livelog"
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

// sessionStart renders the session-start text of agent: the frozen
// snapshot (identity, MEMORY, USER, memory index), then the unread log
// entries, the latest checkpoint and the current decisions.
func (s *Server) sessionStart(agent string) (string, error) {
	snap, err := agents.RenderSnapshot(s.v, agent)
	if err != nil {
		return "", err
	}
	sections, err := livelog.RenderPromptSections(s.v, agent, 0)
	if err != nil {
		return "", err
	}
	// Joined exactly as 'nexus prompt' joins them.
	text := snap
	if sections = strings.TrimRight(sections, "\n"); sections != "" {
		if text != "" {
			text += "\n"
		}
		text += sections + "\n"
	}
	return text, nil
}
