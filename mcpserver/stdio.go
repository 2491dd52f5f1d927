package mcpserver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"syscall"

	"github.com/mark3labs/mcp-go/server"

	"github.com/nexus-memory/nexus/identity"
)

// ServeStdio serves MCP on in/out (a client's pipes) for one agent until
// in ends or ctx is done. Calls in flight when ctx is cancelled finish
// their writes. A process serves stdio at most once at a time (the stdio
// session is a process-wide singleton in mcp-go).
func (s *Server) ServeStdio(ctx context.Context, agent string, in io.Reader, out io.Writer) error {
	// The agent must exist; a person's typo in its IDENTITY.md must not
	// keep it from serving (the snapshot shows what to fix).
	if _, err := identity.Load(s.v, agent); err != nil && !errors.Is(err, identity.ErrMalformed) && !errors.Is(err, identity.ErrKey) {
		return err
	}
	ss := server.NewStdioServer(s.mcp)
	ss.SetErrorLogger(slog.NewLogLogger(s.log.Handler(), slog.LevelWarn))
	ss.SetContextFunc(func(ctx context.Context) context.Context { return withAgent(ctx, agent) })
	s.log.Info("serving MCP on stdio", "agent", agent, "vault", s.v.Root())
	err := ss.Listen(ctx, in, out)
	if ctx.Err() != nil || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrClosedPipe) {
		// Shut down, or the client went away: both are a normal end.
		return nil
	}
	return err
}
