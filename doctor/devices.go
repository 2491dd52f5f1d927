package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

// machine reports what stops this machine from appending under its device
// name (SPEC §4 "A device is a machine, not a name"): a vault folder copied
// from another machine, or a name another machine claimed; and this
// machine's device keys that a merge of IDENTITY.md dropped (its entries
// then fail verification).
func (c *checker) machine(ctx context.Context) (string, []Finding, error) {
	device, err := c.v.Device()
	if err != nil {
		return "", nil, err
	}
	m, copied, err := c.v.Machine()
	if err != nil {
		return "", nil, err
	}
	var findings []Finding
	rename := c.cmd("device", "name", "NAME") + "  # NAME: a name no other machine uses; entries already written keep verifying"
	switch {
	case copied != "":
		findings = append(findings, Finding{
			Path: vault.MachineFile,
			Problem: fmt.Sprintf("this vault folder is a copy of another machine's (%s): it carries that machine's device name %q and keys, so appends here are refused until this machine has a name of its own",
				copied, device),
			Fix: rename + "; it also removes the other machine's private keys from this copy",
		})
	default:
		claim, err := c.v.DeviceClaim(device)
		if err != nil {
			return "", nil, err
		}
		if claim != nil && (m == nil || len(claim.Machines) > 1 || len(claim.Machines) == 1 && claim.Machines[0] != m.ID) {
			who := "another machine"
			if claim.Host != "" {
				who += " (host " + claim.Host + ")"
			}
			findings = append(findings, Finding{
				Path:    claim.Path,
				Problem: fmt.Sprintf("the device name %q of this machine belongs to %s: appends here are refused so that two machines never write one feed", device, who),
				Fix:     rename,
			})
		}
	}
	if copied == "" {
		dropped, err := identity.DroppedKeys(c.v)
		if err != nil {
			return "", nil, err
		}
		for _, d := range dropped {
			findings = append(findings, Finding{
				Path: identity.IdentityPath(d.Agent),
				Problem: fmt.Sprintf("IDENTITY.md of %s no longer lists this machine's key (%s): a merge of the file (a git conflict resolved \"ours\" or \"theirs\", a sync tool's newer copy) dropped it, so the entries this machine signed as %s fail verification",
					d.Agent, d.Key, d.Agent),
				Fix: c.cmd("device", "restore-keys") + "  # lists it again; every other key is kept (any log command does it too)",
			})
		}
	}
	summary := fmt.Sprintf("this machine writes as %q", device)
	if m != nil {
		summary += " (machine " + m.ID[:8] + ")"
	}
	return summary, findings, nil
}

// droppedKeyFix is the fix for a log finding about an entry of writer
// whose agent's key on this machine a merge dropped from IDENTITY.md, or
// "" when that is not the cause.
func (c *checker) droppedKeyFix(writer string) string {
	if c.v == nil || livelog.WriterAgent(writer) == "" {
		return ""
	}
	dropped, err := identity.DroppedKeys(c.v)
	if err != nil {
		return ""
	}
	for _, d := range dropped {
		if d.Agent == livelog.WriterAgent(writer) {
			return c.cmd("device", "restore-keys") + "  # IDENTITY.md of " + d.Agent + " lost this machine's key in a merge; the entry itself is intact"
		}
	}
	return ""
}

// deviceSettled reports whether two machines' use of the device name d is
// over: one of them took a name of its own ([vault.Vault.DeviceSettled],
// the rule 'nexus log verify' applies too). What the two wrote under d
// stays, both branches read and verified; nothing more will be added to
// the second branch.
func (c *checker) deviceSettled(d string) bool {
	return c.v != nil && c.v.DeviceSettled(d)
}

// feedDevice returns the device of a feed file's path
// (log/live/YYYY-MM/AGENT@DEVICE.md, or its conflict copy), or "".
func feedDevice(rel string) string {
	i := strings.LastIndex(rel, "@")
	if i < 0 {
		return ""
	}
	d := rel[i+1:]
	if j := strings.IndexAny(d, ". "); j >= 0 {
		d = d[:j]
	}
	if vault.CheckDeviceName(d) != nil {
		return ""
	}
	return d
}
