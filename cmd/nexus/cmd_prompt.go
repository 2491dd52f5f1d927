package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/agents"
)

func init() { register(newPromptCmd) }

func newPromptCmd(g *globals) *cobra.Command {
	var memoryOnly bool
	cmd := &cobra.Command{
		Use:   "prompt",
		Short: "Print the agent's session-start render (the frozen snapshot)",
		Long: `Print what an agent is given at the start of a session: its identity
(IDENTITY.md without frontmatter), its MEMORY.md and USER.md blocks in the
exact Hermes Agent format, its memory index of fact files, then its unread
live-log entries, latest checkpoint and current decisions. Paste it into a
system prompt once per session; writes made during the session show in tool
results, not in this snapshot. It reads only: nothing is acknowledged.

--memory-only stops after the memory index (identity, MEMORY, USER, index).

Example:
  nexus --agent lyra prompt
  nexus --agent lyra --json prompt | jq -r .prompt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			agent, err := g.agentName()
			if err != nil {
				return err
			}
			v, err := g.openVault()
			if err != nil {
				return err
			}
			render := agents.RenderSessionStart
			if memoryOnly {
				render = agents.RenderSnapshot
			}
			text, err := render(v, agent)
			if err != nil {
				return err
			}
			agents.RecordSessionStart(v, agent, "cli") // a recall signal (docs/curation.md)
			agents.FlushRecall()
			res := struct {
				Agent  string `json:"agent"`
				Prompt string `json:"prompt"`
			}{agent, text}
			return g.emit(res, nil, func(w io.Writer) { io.WriteString(w, text) })
		},
	}
	cmd.Flags().BoolVar(&memoryOnly, "memory-only", false, "print only identity, MEMORY, USER and the memory index")
	return cmd
}
