package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// session is one agent's MCP client session over Streamable HTTP: what a
// real agent runtime (Hermes, OpenClaw, Claude Code) holds while it works.
type session struct {
	agent string
	c     *client.Client
	// notice is the unread-log notice the server appended to the last tool
	// result ("1 new log entry from ella — call log_read"), or "". Only the
	// goroutine that calls owns it.
	notice string
}

// connect opens a new MCP session for agent at url, authenticated by its
// bearer token.
func connect(ctx context.Context, url, agent, token string) (*session, error) {
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(map[string]string{
		"Authorization": "Bearer " + token,
	}))
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", agent, err)
	}
	if err := c.Start(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("connect %s: %w", agent, err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "nexus-demo-" + agent, Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize session of %s: %w", agent, err)
	}
	return &session{agent: agent, c: c}, nil
}

// close ends the session.
func (s *session) close() error { return s.c.Close() }

// toolError is a tool's error result: the message an agent would act on.
type toolError struct {
	tool, msg string
}

func (e *toolError) Error() string { return e.tool + ": " + e.msg }

// call calls a tool and returns its text. A tool error result is returned as
// a *toolError.
func (s *session) call(ctx context.Context, tool string, args map[string]any) (string, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		return "", fmt.Errorf("%s calls %s: %w", s.agent, tool, err)
	}
	text := resultText(res.Content)
	s.notice = noticeOf(res.Content)
	if res.IsError {
		return text, &toolError{tool: tool, msg: text}
	}
	return text, nil
}

// callJSON calls a tool and decodes its structured result (or, failing
// that, its text as JSON) into out.
func (s *session) callJSON(ctx context.Context, tool string, args map[string]any, out any) (string, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		return "", fmt.Errorf("%s calls %s: %w", s.agent, tool, err)
	}
	text := resultText(res.Content)
	s.notice = noticeOf(res.Content)
	if res.IsError {
		return text, &toolError{tool: tool, msg: text}
	}
	if out == nil {
		return text, nil
	}
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err == nil && json.Unmarshal(raw, out) == nil {
			return text, nil
		}
	}
	if err := json.Unmarshal([]byte(firstText(res.Content)), out); err != nil {
		return text, fmt.Errorf("%s: result of %s is not the expected JSON: %w", s.agent, tool, err)
	}
	return text, nil
}

// prompt returns the text of a prompt (session_start).
func (s *session) prompt(ctx context.Context, name string) (string, error) {
	req := mcp.GetPromptRequest{}
	req.Params.Name = name
	res, err := s.c.GetPrompt(ctx, req)
	if err != nil {
		return "", fmt.Errorf("%s gets prompt %s: %w", s.agent, name, err)
	}
	var b strings.Builder
	for _, m := range res.Messages {
		if t, ok := m.Content.(mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String(), nil
}

func resultText(content []mcp.Content) string {
	var parts []string
	for _, c := range content {
		if t, ok := c.(mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// firstText is the text of the first content block: a tool's JSON result,
// without the notice that may follow it.
func firstText(content []mcp.Content) string {
	for _, c := range content {
		if t, ok := c.(mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

// noticeOf returns the unread-log notice appended after a tool's result.
func noticeOf(content []mcp.Content) string {
	if len(content) < 2 {
		return ""
	}
	if t, ok := content[len(content)-1].(mcp.TextContent); ok && strings.Contains(t.Text, "log_read") {
		return t.Text
	}
	return ""
}
