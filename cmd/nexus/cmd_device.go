package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

func init() { register(newDeviceCmd) }

type deviceResult struct {
	Device  string `json:"device"`
	Changed bool   `json:"changed"`
	Old     string `json:"old,omitempty"`
}

// newDeviceCmd is 'nexus device' and 'nexus device name NAME'.
func newDeviceCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "device",
		Short: "Print this machine's device name (the @DEVICE of every feed written here)",
		Long: `Print this machine's device name. Every agent appending on this machine
writes to its own feed lyra@DEVICE (log/live/YYYY-MM/lyra@DEVICE.md), so
two machines sharing a vault by git, Syncthing or Obsidian Sync never
append to the same file.

The name is machine-local (.nexus/state/device, never synced). It defaults
to the host name made safe (first label, lower case, a-z 0-9 '-' '_'),
recorded on first use. Give each machine its own name: two machines with
one name fork their agents' feeds ('nexus log verify' and 'nexus doctor'
report it). Change it with 'nexus device name NAME'.

Example:
  nexus device
  nexus device name vps`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runDevice(g) },
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "name NAME",
		Short: "Set this machine's device name",
		Long: `Set this machine's device name: 1-64 characters of a-z, 0-9, '-' and '_',
starting with a letter or digit. New entries go to feeds AGENT@NAME;
entries already written stay in the feeds of the old name (they are still
read and verified). Use a name no other machine sharing the vault uses.

Example:
  nexus device name laptop`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runDeviceName(g, args[0]) },
	})
	return cmd
}

// runDevice prints this machine's device name.
func runDevice(g *globals) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	name, err := v.Device()
	if err != nil {
		return err
	}
	return g.emit(deviceResult{Device: name}, nil, func(w io.Writer) { fmt.Fprintln(w, name) })
}

// runDeviceName sets this machine's device name.
func runDeviceName(g *globals, name string) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	old, _ := v.Device()
	if err := v.SetDevice(name); err != nil {
		return err
	}
	res := deviceResult{Device: name, Changed: old != name, Old: old}
	return g.emit(res, nil, func(w io.Writer) {
		if res.Changed && old != "" {
			fmt.Fprintf(w, "Device name is now %s (was %s).\n", name, old)
		} else {
			fmt.Fprintf(w, "Device name is %s.\n", name)
		}
	})
}
