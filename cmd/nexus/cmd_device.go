package main

import (
	"fmt"
	"io"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/spf13/cobra"
)

func init() { register("device", newDeviceCmd) }

type deviceResult struct {
	Device  string `json:"device"`
	Changed bool   `json:"changed"`
	Old     string `json:"old,omitempty"`
	// Machine is this machine's random id (.nexus/state/machine), ""
	// before its first append.
	Machine string `json:"machine,omitempty"`
	// Copied says why this vault folder is a copy of another machine's
	// ("" when it is not): appends are refused until 'device name NAME'.
	Copied string `json:"copied,omitempty"`
}

// restoreKeysResult is what 'nexus device restore-keys' put back.
type restoreKeysResult struct {
	Restored []identity.DroppedKey `json:"restored"`
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
one name fork their agents' feeds. Change it with 'nexus device name NAME'.

A device is a machine, not a name: the first append under a name claims it
for this machine (log/devices/NAME.md, synced, holding this machine's random
id from .nexus/state/machine). A second machine that picks a claimed name,
and a vault folder copied whole to another machine (cp -a, rsync -a, a
restored backup), are refused before they append, and asked for a name of
their own; reading works meanwhile. 'nexus device' says when this folder
is such a copy.

Example:
  nexus device
  nexus device name vps
  nexus device restore-keys`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runDevice(g) },
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "name NAME",
		Short: "Set this machine's device name",
		Long: `Set this machine's device name: 1-64 characters of a-z, 0-9, '-' and '_',
starting with a letter or digit. New entries go to feeds AGENT@NAME;
entries already written stay in the feeds of the old name (they are still
read and verified). A name another machine claimed (log/devices/NAME.md)
is refused.

In a vault folder copied from another machine, this machine becomes one of
its own: a new machine id, and the copy's private keys of the other
machine (.nexus/keys/) removed, so it can never sign as that machine; its
agents get keys of their own on their first append here.

Example:
  nexus device name laptop`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runDeviceName(g, args[0]) },
	}, &cobra.Command{
		Use:   "restore-keys",
		Short: "Put this machine's device keys back into IDENTITY.md after a merge dropped them",
		Long: `Put this machine's public keys back into the agents' IDENTITY.md where a
merge dropped them: a git conflict in device_keys resolved "ours" or
"theirs", or a sync tool's newer copy winning, after two machines each
added their key. Until then 'nexus log verify' and 'nexus doctor' call the
entries this machine signed "edited". Each key is listed again under this
machine's device name; every other key and line is kept. Any log command
does the same on its way; this does it now, and says what it did.

Example:
  nexus device restore-keys`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runDeviceRestoreKeys(g) },
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
	res := deviceResult{Device: name}
	m, copied, err := v.Machine()
	if err != nil {
		return err
	}
	if m != nil {
		res.Machine, res.Copied = m.ID, copied
	}
	return g.emit(res, nil, func(w io.Writer) {
		fmt.Fprintln(w, name)
		if res.Copied != "" {
			fmt.Fprintf(g.stderr, "nexus: this vault folder is a copy of another machine's (%s): appends are refused until this machine has a name of its own: nexus device name NAME\n", res.Copied)
		}
	})
}

// runDeviceRestoreKeys puts this machine's dropped device keys back.
func runDeviceRestoreKeys(g *globals) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	done, err := identity.RestoreKeys(v)
	res := restoreKeysResult{Restored: done}
	if res.Restored == nil {
		res.Restored = []identity.DroppedKey{}
	}
	return g.emit(res, err, func(w io.Writer) {
		if len(done) == 0 {
			fmt.Fprintln(w, "Every key of this machine is listed in its agent's IDENTITY.md.")
		}
		for _, d := range done {
			fmt.Fprintf(w, "Restored %s's key of device %s in %s (%s).\n", d.Agent, d.Device, identity.IdentityPath(d.Agent), d.Key)
		}
	})
}

// runDeviceName sets this machine's device name.
func runDeviceName(g *globals, name string) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	old, _ := v.Device()
	_, copied, _ := v.Machine()
	if old != "" && old != name {
		// The entries this machine signed under its old name stay
		// trusted here once its keys of that name are gone (a copied
		// folder gives up the other machine's keys).
		if l, err := livelog.Open(v, livelog.Options{}); err == nil {
			if err := l.PinOwnKeys(); err != nil {
				return fmt.Errorf("set device name: %w", err)
			}
		}
	}
	if err := v.SetDevice(name); err != nil {
		return err
	}
	res := deviceResult{Device: name, Changed: old != name, Old: old, Copied: copied}
	if m, _, err := v.Machine(); err == nil && m != nil {
		res.Machine = m.ID
	}
	return g.emit(res, nil, func(w io.Writer) {
		if res.Changed && old != "" {
			fmt.Fprintf(w, "Device name is now %s (was %s).\n", name, old)
		} else {
			fmt.Fprintf(w, "Device name is %s.\n", name)
		}
		if copied != "" {
			fmt.Fprintf(w, "This vault folder was a copy of machine %s's; it is now a machine of its own. The other machine's private keys were removed from this copy: its agents get keys of their own on their first append here.\n", old)
		}
	})
}
