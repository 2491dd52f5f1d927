package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/person"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// reviews reports items in review/pending/ that need a person: waiting for
// more than [Options.ReviewAge], unreadable, or approved but not applicable.
func (c *checker) reviews(ctx context.Context) (string, []Finding, error) {
	items, err := retention.List(c.v, retention.Filter{})
	if err != nil {
		return "", nil, err
	}
	now := c.opts.Now()
	var findings []Finding
	for _, it := range items {
		switch {
		case it.Status == "invalid":
			findings = append(findings, Finding{
				Path:    it.Path,
				Problem: "review item cannot be read: " + it.Error,
				Fix:     "repair its frontmatter in " + Quote(c.abs(it.Path)) + " (or move it to review/archive/), then run " + c.cmd("review", "list"),
			})
		case it.Error != "" && it.Kind == retention.KindFact && strings.Contains(it.Error, "already exists") && !it.Update:
			// The clash is on name:, which --edit (the text) does not
			// change: approve it under another name, or as an update.
			findings = append(findings, Finding{
				Path:    it.Path,
				Problem: "approved, but it could not be applied: " + it.Error,
				Fix:     c.renameFix(it),
			})
		case it.Error != "":
			findings = append(findings, Finding{
				Path:    it.Path,
				Problem: "approved, but it could not be applied: " + it.Error,
				Fix:     "edit the proposal and approve it again: " + c.cmd("review", "approve", it.ID, "--edit") + ", or reject it: " + c.cmd("review", "reject", it.ID),
			})
		case (it.Status == retention.StatusApproved || it.Status == retention.StatusRejected) && retention.RequirePersonKey(c.v):
			findings = append(findings, Finding{
				Path:    it.Path,
				Problem: "marked " + it.Status + " in Obsidian; it waits for a person's signature (review.require_person_key is on)",
				Fix:     c.cmd("review", "sign", it.ID) + " (asks for your review key's passphrase on a terminal)",
			})
		case it.Status == retention.StatusApproved || it.Status == retention.StatusRejected:
			findings = append(findings, Finding{
				Path:    it.Path,
				Problem: "marked " + it.Status + " in Obsidian but not carried out yet (no 'nexus serve' or 'nexus watch' is running)",
				Fix:     c.cmd("review", "list") + " (carries out decisions made in Obsidian)",
			})
		case !it.Provenance.Time.IsZero() && now.Sub(it.Provenance.Time) > c.opts.ReviewAge:
			age := now.Sub(it.Provenance.Time)
			findings = append(findings, Finding{
				Path:    it.Path,
				Problem: fmt.Sprintf("%s from %s has waited %s for review: %s", it.Kind, it.Agent, days(age), clip(strings.TrimSpace(it.Summary()), 80)),
				Fix:     "decide it: " + c.cmd("review", "approve", it.ID) + " or " + c.cmd("review", "reject", it.ID) + " (or set status: approved/rejected in Obsidian)",
			})
		}
	}
	// A decision a killed process left half done (the next command
	// finishes it; one still here could not be finished).
	ins, err := retention.Unfinished(c.v)
	if err != nil {
		return "", nil, err
	}
	for _, in := range ins {
		findings = append(findings, Finding{
			Path:    in.Path(),
			Problem: fmt.Sprintf("review %s of %s was left unfinished (started %s by process %d, which did not finish it)", in.Op, in.ID, in.Started.Format(time.RFC3339), in.PID),
			Fix:     c.cmd("review", "list") + " (any command finishes it; if it stays, the error it prints says why)",
		})
	}
	// A curator pass killed after filing its proposals, before its diary:
	// its snapshot is there, its diary is not (curator.Interrupted; the
	// reason's prefix is curator.PassSnapshotReason, which doctor may
	// not import). The next pass writes the diary.
	snaps, err := retention.ListSnapshots(c.v)
	if err != nil {
		return "", nil, err
	}
	for _, s := range snaps {
		id, ok := strings.CutPrefix(s.Reason, curatorPassReason)
		if !ok || retention.CheckID(id) != nil {
			continue
		}
		if _, err := os.Lstat(c.v.MustPath(vault.CuratorDir + "/" + id + ".md")); errors.Is(err, fs.ErrNotExist) {
			findings = append(findings, Finding{
				Path:    vault.CuratorDir + "/" + id + ".md",
				Problem: fmt.Sprintf("curator pass %s (%s) was interrupted after filing its proposals: it wrote no diary", id, s.Created.Format(time.RFC3339)),
				Fix:     c.cmd("curator", "run") + " (writes the missing diary from the items the pass filed, then runs a pass)",
			})
		}
	}
	if retention.RequirePersonKey(c.v) {
		pf, err := c.personKeys()
		if err != nil {
			return "", nil, err
		}
		findings = append(findings, pf...)
	}
	return plural(len(items), "item", "items") + " pending review", findings, nil
}

// curatorPassReason is curator.PassSnapshotReason.
const curatorPassReason = "before curator pass "

// maxUnsignedNamed bounds the decisions without a signature named one by
// one; the rest are counted in one more finding.
const maxUnsignedNamed = 20

// personKeys checks, with review.require_person_key on, the people's
// review keys as this machine sees them and every decided item's
// signature (SPEC §7).
func (c *checker) personKeys() ([]Finding, error) {
	var findings []Finding
	ps, err := person.People(c.v)
	if err != nil {
		return nil, err
	}
	trusted := 0
	for _, p := range ps {
		switch p.State {
		case person.Trusted:
			trusted++
		case person.Unpinned:
			findings = append(findings, Finding{
				Path:    p.Path,
				Problem: fmt.Sprintf("review key %s (fingerprint %s) is not trusted on this machine: decisions signed with it count as unsigned here", p.Name, p.Fingerprint),
				Fix:     "if " + p.Name + " made it, compare the fingerprint with the one 'nexus person init' printed and run " + c.cmd("person", "trust", p.Name) + " on a terminal; if nobody did, remove " + Quote(c.abs(p.Path)),
			})
		case person.Changed:
			findings = append(findings, Finding{
				Path:    p.Path,
				Problem: fmt.Sprintf("review key %s now holds another key (fingerprint %s) than the one this machine trusts: the file was replaced, by its owner or by whoever can write the vault", p.Name, p.Fingerprint),
				Fix:     "if " + p.Name + " replaced the key, compare the fingerprint and run " + c.cmd("person", "trust", p.Name) + " on a terminal; if not, restore the file from the vault's history",
			})
		default:
			findings = append(findings, Finding{
				Path:    p.Path,
				Problem: "review key file cannot be read: " + p.Error,
				Fix:     "restore " + Quote(c.abs(p.Path)) + " from the vault's history, or remove it",
			})
		}
	}
	if local, err := person.LocalKeys(c.v); err == nil && trusted == 0 && len(local) == 0 {
		findings = append(findings, Finding{
			Path:    vault.ConfigFile,
			Problem: "review.require_person_key is on, and this machine neither holds nor trusts a person's review key: every decision here is refused",
			Fix:     c.cmd("person", "init") + " on a terminal (or " + c.cmd("person", "trust", "NAME") + " for a key made on another machine)",
		})
	}
	unsigned, err := retention.UnsignedDecisions(c.v)
	if err != nil {
		return nil, err
	}
	for i, u := range unsigned {
		if i == maxUnsignedNamed {
			findings = append(findings, Finding{
				Path:    vault.ArchiveDir,
				Problem: fmt.Sprintf("%d more decided items carry no valid person signature (the newest %d are named above)", len(unsigned)-maxUnsignedNamed, maxUnsignedNamed),
				Fix:     "deal with those named above, then run " + c.cmd("doctor") + " again",
			})
			break
		}
		it := u.Item
		what := it.Status + " " + it.ID
		if it.Result != "" {
			what += " (it wrote " + it.Result + ")"
		}
		findings = append(findings, Finding{
			Path:    it.Path,
			Problem: what + " has no valid person signature: " + u.Reason,
			Fix:     "check who decided it: " + c.cmd("review", "show", it.ID) + "; if no person did, undo what it wrote by hand, or with " + c.cmd("rollback", "--dry-run") + " when a snapshot holds it",
		})
	}
	return findings, nil
}

func days(d time.Duration) string {
	n := int(d.Hours() / 24)
	if n == 1 {
		return "1 day"
	}
	return fmt.Sprintf("%d days", n)
}

// renameFix is the fix for a fact proposal whose name an existing fact
// has: a command that gives it another name and approves it, when the
// name can be written into a sed command safely; and the other ways.
func (c *checker) renameFix(it retention.Item) string {
	file := c.abs(it.Path)
	other := "to replace the existing fact instead, add the line update: true to the frontmatter of " + Quote(file) + " and run " + c.cmd("review", "approve", it.ID) +
		"; or drop the proposal: " + c.cmd("review", "reject", it.ID)
	newName := it.Name + " (2)"
	if strings.ContainsAny(newName, "'\\/&\n\r\"") {
		return "give it another name: set name: in " + Quote(file) + " to a name no fact has, then run " + c.cmd("review", "approve", it.ID) + "; " + other
	}
	return "sed -i.bak 's/^name: .*/name: \"" + newName + "\"/' " + Quote(file) + " && rm " + Quote(file+".bak") + " && " + c.cmd("review", "approve", it.ID) +
		"  # approves it as the fact \"" + newName + "\", beside the existing one; " + other
}
