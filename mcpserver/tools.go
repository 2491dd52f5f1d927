package mcpserver

// tools returns every tool the server offers, in the order of SPEC §6.
func (s *Server) tools() []tool {
	ts := []tool{s.memoryTool()}
	ts = append(ts, s.factTools()...)
	ts = append(ts, s.searchTool(), s.memoryGetTool(), s.linksTool())
	ts = append(ts, s.logTools()...)
	ts = append(ts, s.retainTool())
	return ts
}
