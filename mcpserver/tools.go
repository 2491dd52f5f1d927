package mcpserver

// tools returns every tool the server offers, in the order of SPEC §6.
func (s *Server) tools() []tool {
	var ts []tool
	ts = append(ts, s.factTools()...)
	ts = append(ts, s.memoryGetTool())
	return ts
}
