package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/identity"
)

func newAgentRotateKeyCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "rotate-key NAME",
		Short: "Replace an agent's signing key on this machine, signed by the old key",
		Long: `Make NAME a new private key on this machine and list its public key under
this machine's device name in IDENTITY.md, together with a rotation: the
new key signed by the old one. Machines that pinned the old key (see 'nexus
log trust') accept the new one without asking anyone, because only the old
key's holder can sign a rotation. Entries the old key signed still verify:
its public key stays listed and pinned. The old private key is kept beside
the new one as .nexus/keys/NAME.key.rotated-UNIXTIME (mode 0600); delete it
once you no longer want it.

Needs the old key on this machine (exit 1 without it). If the old key was
lost, use 'nexus agent new-key NAME' instead; other machines then name the
new key "key changed" until a person runs 'nexus log trust NAME@DEVICE'
there.

Example:
  nexus agent rotate-key lyra`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runAgentRotateKey(g, args[0]) },
	}
}

func runAgentRotateKey(g *globals, name string) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	device, err := v.Device()
	if err != nil {
		return err
	}
	l, err := g.openLog()
	if err != nil {
		return err
	}
	old, nw, err := identity.RotateKey(v, name, device, g.now())
	if err != nil {
		return err
	}
	writer := name + "@" + device
	if err := l.Rotated(writer, old, nw); err != nil {
		return fmt.Errorf("pin the rotated keys of %s: %w", writer, err)
	}
	res := struct {
		Name   string `json:"name"`
		Device string `json:"device"`
		Old    string `json:"old"`
		New    string `json:"new"`
		Key    string `json:"key"`
	}{name, device, identity.Fingerprint(old), identity.Fingerprint(nw), identity.KeyPath(name)}
	return g.emit(res, nil, func(w io.Writer) {
		fmt.Fprintf(w, "Rotated the key of %s on device %s: %s -> %s (signed by the old key)\n  key: %s\n", name, device, res.Old, res.New, res.Key)
	})
}
