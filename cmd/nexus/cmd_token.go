package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/identity"
)

// mcpEndpointPath is mcpserver.EndpointPath, where 'nexus serve --http'
// serves MCP, kept here so that 'agent token' does not link the MCP server
// (and its package init) into the lean build; a test keeps them equal.
const mcpEndpointPath = "/mcp"

// newAgentTokenCmd is 'nexus agent token NAME [--rotate]'.
// tokenOptions are the flags of 'nexus agent token'.
type tokenOptions struct {
	rotate bool // --rotate
}

func newAgentTokenCmd(g *globals) *cobra.Command {
	var o tokenOptions
	cmd := &cobra.Command{
		Use:   "token NAME [--rotate]",
		Short: "Issue an agent's bearer token for 'nexus serve --http'",
		Long: `Print a new bearer token for agent NAME, once. Only its SHA-256 hash is
kept (in .nexus/config.yaml under agents: NAME: token_sha256), so store the
token where the agent's MCP client can read it; it cannot be shown again.

An agent that already has a token keeps it unless --rotate is given; then
the old token stops working at once, also in a running server.

Example:
  nexus agent token lyra
  curl -H "Authorization: Bearer nxs_..." http://127.0.0.1:7777/mcp ...`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runAgentToken(g, o, args) },
	}
	cmd.Flags().BoolVar(&o.rotate, "rotate", false, "replace the agent's existing token")
	return cmd
}

// runAgentToken issues (or with --rotate replaces) agent args[0]'s bearer
// token.
func runAgentToken(g *globals, o tokenOptions, args []string) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	token, err := identity.NewToken(v, args[0], o.rotate)
	if errors.Is(err, identity.ErrTokenExists) {
		// identity's message says "rotate it"; here that is a flag.
		return fmt.Errorf("agent %s already has a token: pass --rotate to replace it (the old token then stops working)", args[0])
	}
	if err != nil {
		return err
	}
	res := struct {
		Agent    string `json:"agent"`
		Token    string `json:"token"`
		Rotated  bool   `json:"rotated"`
		Endpoint string `json:"endpoint_path"`
	}{args[0], token, o.rotate, mcpEndpointPath}
	return g.emit(res, nil, func(w io.Writer) {
		fmt.Fprintf(w, "%s\n", token)
		fmt.Fprintf(g.stderr, "Token for %s (shown once; only its hash is stored). Send it as 'Authorization: Bearer TOKEN' to %s.\n", args[0], mcpEndpointPath)
	})
}
