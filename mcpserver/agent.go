package mcpserver

import "context"

type agentKey struct{}

// withAgent binds the calling agent to ctx; only transports do this.
func withAgent(ctx context.Context, agent string) context.Context {
	return context.WithValue(ctx, agentKey{}, agent)
}

// agentFrom returns the agent bound by the transport.
func agentFrom(ctx context.Context) (string, bool) {
	a, ok := ctx.Value(agentKey{}).(string)
	return a, ok && a != ""
}
