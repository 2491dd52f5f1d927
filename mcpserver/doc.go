// Package mcpserver serves a Nexus vault over the Model Context Protocol:
// the tools of SPEC §6 (memory, facts, search, the live log, decisions,
// checkpoints, retention), the session_start prompt, and the vault's
// markdown files as resources, with the live log as a subscribable resource.
//
// It holds no logic of its own beyond translating between MCP and the
// domain packages (agents, livelog, index, retention): arguments in,
// results and actionable tool errors out.
//
// The calling agent always comes from the transport, never from tool
// arguments: [Server.ServeStdio] serves one agent named by the caller, and
// [Server.Handler] serves several over Streamable HTTP, each request
// authenticated by a bearer token bound to one agent (see
// [identity.TokenChecker]).
package mcpserver
