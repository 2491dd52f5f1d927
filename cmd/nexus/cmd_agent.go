package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/retention"
)

func init() { register(newAgentCmd) }

func newAgentCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Add, list and show agents",
	}
	var role string
	add := &cobra.Command{
		Use:   "add NAME",
		Short: "Create an agent: identity, signing key and profile home",
		Long: `Create agents/NAME/ with IDENTITY.md (role, priorities, limits, relation to
other agents; the public key in its frontmatter), an ed25519 signing key in
.nexus/keys/NAME.key (mode 0600), and the memory folders.
NAME is 1-64 of a-z, 0-9, '-', '_'.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := g.openVault()
			if err != nil {
				return err
			}
			id, err := agents.Add(v, args[0], role, g.now())
			if err != nil {
				return err
			}
			res := agentJSON{Name: id.Name, Role: id.Role, Fingerprint: id.Fingerprint(), Home: identity.Home(id.Name)}
			return g.emit(res, nil, func(w io.Writer) {
				fmt.Fprintf(w, "Added agent %s (%s)\n  home: %s/\n  key:  %s\n", id.Name, id.Fingerprint(), identity.Home(id.Name), identity.KeyPath(id.Name))
			})
		},
	}
	add.Flags().StringVar(&role, "role", "", "one line saying what the agent does")
	list := &cobra.Command{
		Use:   "list",
		Short: "List agents with roles and key fingerprints",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := g.openVault()
			if err != nil {
				return err
			}
			names, err := identity.List(v)
			if err != nil {
				return err
			}
			out := []agentJSON{}
			for _, n := range names {
				out = append(out, describeAgent(v, n))
			}
			return g.emit(out, nil, func(w io.Writer) {
				var tb table
				tb.row("NAME", "ROLE", "KEY", "MEMORY", "USER", "PENDING REVIEWS")
				for _, a := range out {
					tb.row(a.Name, a.Role, a.Fingerprint, a.MemoryUsage, a.UserUsage, pendingText(a.Pending))
				}
				tb.write(w)
			})
		},
	}
	show := &cobra.Command{
		Use:   "show NAME",
		Short: "Show an agent's identity file and memory usage",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := g.openVault()
			if err != nil {
				return err
			}
			id, err := identity.Load(v, args[0])
			if err != nil {
				return err
			}
			a := describeAgent(v, id.Name)
			a.Identity = id.Body
			return g.emit(a, nil, func(w io.Writer) {
				fmt.Fprintf(w, "%s — %s\nkey:    %s\nmemory: %s\nuser:   %s\npending reviews: %s\n\n%s", a.Name, a.Role, a.Fingerprint, a.MemoryUsage, a.UserUsage, pendingText(a.Pending), a.Identity)
			})
		},
	}
	cmd.AddCommand(add, list, show, newAgentTokenCmd(g))
	return cmd
}

type agentJSON struct {
	Name        string `json:"name"`
	Role        string `json:"role"`
	Fingerprint string `json:"fingerprint"`
	Home        string `json:"home"`
	MemoryUsage string `json:"memory_usage,omitempty"`
	UserUsage   string `json:"user_usage,omitempty"`
	Identity    string `json:"identity,omitempty"`
	// Pending is how many of the agent's proposals wait for review, and
	// since when (omitted when none).
	Pending *retention.PendingSummary `json:"pending_reviews,omitempty"`
}
