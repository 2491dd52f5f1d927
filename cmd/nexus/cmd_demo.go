//go:build !lite

package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/demo"
)

func init() { register(newDemoCmd) }

// demoOptions are the flags of 'nexus demo'.
type demoOptions struct {
	dir     string // --dir
	keep    bool   // --keep
	appends int    // --appends (hidden: tests play a shorter scene 5)
}

func newDemoCmd(g *globals) *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo [--dir DIR] [--keep=false]",
		Short: "Watch two agents stay in step through a vault (no setup needed)",
		Long: `Play the Nexus story in a fresh vault: two agents, lyra (operations, the kind
one runs on Hermes) and ella (research and planning, the kind one runs on
OpenClaw), each with its own MCP session to a real 'nexus serve --http'
started in-process on a loopback port. Six scenes, narrated step by step:

  1. 02:00 — lyra hands off through a signed log entry; ella's next session
     shows it before she answers, and she acknowledges it
  2. January decisions show in July's snapshots; a later one supersedes one
  3. lyra crashes mid-migration and resumes from her checkpoint
  4. ella proposes a fact about the user; a person approves it; it is in her
     memory index next session
  5. both agents append 500 entries at the same instant; every entry lands
     once and the log verifies
  6. search finds the 02:00 handoff in English and in Korean

It ends with 'nexus doctor' on the vault, the vault's path, how to open it
in Obsidian, and the MCP config to connect a real agent to it.

The vault is made in DIR (which must be new or empty), or else in a new
folder under the OS temp dir. Either way it is kept, so you can look at it;
the demo prints how to delete a temp one. --keep=false removes a temp vault
at the end of a successful run (a --dir vault is never removed).

The demo runs on a story clock: its entries are dated January to September
of last year.

Example:
  nexus demo
  nexus demo --dir ~/nexus-demo && obsidian ~/nexus-demo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runDemo(g, o) },
	}
	cmd.Flags().StringVar(&o.dir, "dir", "", "make the demo vault in DIR (new or empty) instead of a temp folder")
	cmd.Flags().BoolVar(&o.keep, "keep", true, "keep the vault when done; --keep=false deletes a temp vault at the end")
	// Tests play a shorter scene 5; the story is told with 500.
	cmd.Flags().IntVar(&o.appends, "appends", 500, "entries each agent appends in scene 5")
	cmd.Flags().MarkHidden("appends")
	return cmd
}

// runDemo plays the story in a fresh vault; with --json only the result
// is printed, not the narration.
func runDemo(g *globals, o demoOptions) error {
	out := g.stdout
	if g.json {
		out = io.Discard
	}
	res, err := demo.Run(g.ctx, demo.Options{Dir: o.dir, Out: out, Appends: o.appends, Remove: !o.keep})
	if err != nil && res != nil && res.Vault != "" && !g.json {
		fmt.Fprintf(g.stderr, "nexus: the demo's vault is %s\n", res.Vault)
	}
	return g.emit(res, err, nil)
}
