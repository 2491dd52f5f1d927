package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/retention"
)

func init() { register("agent", newAgentCmd) }

// agentAddOptions are the flags and argument of 'nexus agent add'.
type agentAddOptions struct {
	name string
	role string
}

func newAgentCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Add, list and show agents",
		Long: `Every agent that writes to the vault has a name, a home folder agents/NAME/
(IDENTITY.md, MEMORY.md, USER.md, memory/, checkpoints/) and an ed25519
signing key in .nexus/keys/NAME.key that signs its log entries and
decisions. 'agent token' gives it a bearer token for 'nexus serve --http'.

Examples:
  nexus agent add lyra --role "operations: deploys, on-call"
  nexus agent list
  nexus agent show lyra`,
	}
	opts := &agentAddOptions{}
	add := &cobra.Command{
		Use:   "add NAME",
		Short: "Create an agent: identity, signing key and profile home",
		Long: `Create agents/NAME/ with IDENTITY.md (role, priorities, limits, relation to
other agents; the public key in its frontmatter), an ed25519 signing key in
.nexus/keys/NAME.key (mode 0600), and the memory folders.

NAME is 1-64 of a-z, 0-9, '-', '_', starting with a letter or digit (it is a
folder name on every system and a word in log headers). --role is one line,
at most 500 bytes. Adding an agent that exists is refused (exit 1) and
changes nothing. The key is listed under this machine's device name, so in
a vault folder copied from another machine, or under a name another
machine claimed, it is refused (exit 1, nothing written) until this
machine has a name of its own: 'nexus device name NAME' (docs/vault.md).

Example:
  nexus agent add lyra --role "operations: deploys, on-call"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.name = args[0]
			return runAgentAdd(g, opts)
		},
	}
	add.Flags().StringVar(&opts.role, "role", "", "one line saying what the agent does (at most 500 bytes)")
	list := &cobra.Command{
		Use:   "list",
		Short: "List agents with roles and key fingerprints",
		Long: `List every agent with its role, key fingerprint, how full its MEMORY.md and
USER.md are, and how many of its proposals wait for review.

Example:
  nexus agent list
  nexus agent list --json | jq -r '.agents[].name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runAgentList(g) },
	}
	show := &cobra.Command{
		Use:   "show NAME",
		Short: "Show an agent's identity file and memory usage",
		Long: `Show one agent: role, key fingerprint, memory usage, pending reviews, and
its IDENTITY.md as a person wrote it.

Example:
  nexus agent show lyra`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runAgentShow(g, args[0]) },
	}
	cmd.AddCommand(add, list, show, newAgentTokenCmd(g), newAgentNewKeyCmd(g), newAgentRotateKeyCmd(g))
	return cmd
}

func runAgentAdd(g *globals, opts *agentAddOptions) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	id, err := agents.Add(v, opts.name, opts.role, g.now())
	if err != nil {
		return err
	}
	res := agentJSON{Name: id.Name, Role: id.Role, Fingerprint: id.Fingerprint(), Home: identity.Home(id.Name)}
	return g.emit(res, nil, func(w io.Writer) {
		fmt.Fprintf(w, "Added agent %s (%s)\n  home: %s/\n  key:  %s\n", id.Name, id.Fingerprint(), identity.Home(id.Name), identity.KeyPath(id.Name))
	})
}

func runAgentList(g *globals) error {
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
	return g.emit(listOf("agents", out), nil, func(w io.Writer) {
		if len(out) == 0 {
			fmt.Fprintln(w, "No agents yet. Add one: nexus agent add NAME --role \"...\"")
			return
		}
		var tb table
		tb.row("NAME", "ROLE", "KEY", "MEMORY", "USER", "PENDING REVIEWS")
		for _, a := range out {
			tb.row(a.Name, a.Role, a.Fingerprint, a.MemoryUsage, a.UserUsage, pendingText(a.Pending))
		}
		tb.write(w)
	})
}

func runAgentShow(g *globals, name string) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	id, err := identity.Load(v, name)
	if err != nil {
		return err
	}
	a := describeAgent(v, id.Name)
	a.Identity = id.Body
	// Every device's key and this machine's, by fingerprint: what a
	// person compares before 'nexus log trust' on another machine.
	var here []byte
	if s, err := identity.LoadSigner(v, id.Name); err == nil {
		here = s.PublicKey()
		a.ThisMachine = identity.Fingerprint(here)
	}
	for _, dk := range id.Keys() {
		a.DeviceKeys = append(a.DeviceKeys, deviceKeyJSON{Device: dk.Device, Fingerprint: identity.Fingerprint(dk.Key), ThisMachine: bytes.Equal(dk.Key, here)})
	}
	return g.emit(a, nil, func(w io.Writer) {
		head := a.Name
		if a.Role != "" {
			head += " — " + a.Role
		} else {
			head += " (no role set: edit " + identity.IdentityPath(a.Name) + ")"
		}
		fmt.Fprintf(w, "%s\nkey:    %s\n", head, a.Fingerprint)
		for _, dk := range a.DeviceKeys {
			dev := dk.Device
			if dev == "" {
				dev = "(any device)"
			}
			mark := ""
			if dk.ThisMachine {
				mark = "  (this machine's key)"
			}
			fmt.Fprintf(w, "  %s %s%s\n", dev, dk.Fingerprint, mark)
		}
		fmt.Fprintf(w, "memory: %s\nuser:   %s\npending reviews: %s\n\n%s", a.MemoryUsage, a.UserUsage, pendingText(a.Pending), a.Identity)
	})
}

// deviceKeyJSON is one device's key of an agent, as 'agent show' lists it.
type deviceKeyJSON struct {
	Device      string `json:"device"`
	Fingerprint string `json:"fingerprint"`
	ThisMachine bool   `json:"this_machine,omitempty"`
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
	// DeviceKeys and ThisMachine ('agent show' only) are the keys
	// IDENTITY.md lists, by device, and this machine's key.
	DeviceKeys  []deviceKeyJSON `json:"device_keys,omitempty"`
	ThisMachine string          `json:"this_machine_key,omitempty"`
}
