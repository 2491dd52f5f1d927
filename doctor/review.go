package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/retention"
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
	return plural(len(items), "item", "items") + " pending review", findings, nil
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
