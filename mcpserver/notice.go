package mcpserver

// unreadNotice returns the line appended to every tool result of an agent
// with unread live-log entries, or "".
func (s *Server) unreadNotice(agent string) string {
	return ""
}
