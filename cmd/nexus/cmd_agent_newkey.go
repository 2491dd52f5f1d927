package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/identity"
)

func newAgentNewKeyCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "new-key NAME",
		Short: "Make an agent a new signing key on this machine, on purpose",
		Long: `Make NAME a new private key on this machine (.nexus/keys/NAME.key, mode
0600) and list its public key under this machine's device name in
IDENTITY.md.

For a key file that was lost or damaged. When IDENTITY.md lists a key for
this device and the key file is gone, 'log append' and every other signing
command refuse (exit 1) rather than make a new identity silently: restore
the key from a backup (cp BACKUP/.nexus/keys/NAME.key .nexus/keys/), or
run this. Entries the old key signed still verify (its public key stays
listed). A key file that cannot be read as a key is kept beside it as
NAME.key.unusable-UNIXTIME; a usable key is never replaced (exit 1).

Example:
  nexus agent new-key lyra`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runAgentNewKey(g, args[0]) },
	}
}

func runAgentNewKey(g *globals, name string) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	// The key is listed under this machine's device name: not in a vault
	// folder copied from another machine, nor under a name another
	// machine claimed.
	device, err := v.CheckMachine()
	if err != nil {
		return err
	}
	s, err := identity.NewDeviceKey(v, name, device, g.now())
	if err != nil {
		return err
	}
	fp := identity.Fingerprint(s.PublicKey())
	res := struct {
		Name        string `json:"name"`
		Device      string `json:"device"`
		Fingerprint string `json:"fingerprint"`
		Key         string `json:"key"`
	}{name, device, fp, identity.KeyPath(name)}
	return g.emit(res, nil, func(w io.Writer) {
		fmt.Fprintf(w, "New key for %s on device %s (%s)\n  key: %s\n", name, device, fp, identity.KeyPath(name))
	})
}
