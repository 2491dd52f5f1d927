package livelog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// promptBodyRunes bounds how much of an entry's body the prompt shows.
const promptBodyRunes = 300

// RenderPromptSections renders the three session-start sections for agent:
// its unread log entries (the newest maxEntries, oldest first, with a line
// saying how many more there are), its latest checkpoint, and the current
// (not superseded) decisions. It reads only; nothing is acknowledged.
// maxEntries <= 0 means the vault's prompt_log_entries setting.
func RenderPromptSections(v *vault.Vault, agent string, maxEntries int) (string, error) {
	if maxEntries <= 0 {
		maxEntries = v.Config().PromptLogEntries
	}
	l, err := Open(v, Options{})
	if err != nil {
		return "", err
	}
	unread, total, err := l.unreadTail(agent, maxEntries)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Unread log entries (%d)\n", total)
	if total == 0 {
		b.WriteString("Nothing new in the live log.\n")
	}
	if more := total - len(unread); more > 0 {
		fmt.Fprintf(&b, "(%d older unread entries not shown; call log_read to see them all.)\n", more)
	}
	for _, e := range unread {
		b.WriteString(promptEntry(&e))
	}

	b.WriteString("\n## Latest checkpoint\n")
	cp, err := LoadCheckpoint(v, agent)
	switch {
	case errors.Is(err, ErrNoCheckpoint):
		b.WriteString("No checkpoint saved.\n")
	case err != nil:
		fmt.Fprintf(&b, "(checkpoint unreadable: %v)\n", err)
	default:
		fmt.Fprintf(&b, "Saved %s.\n- Task: %s\n", cp.Time.Format(time.RFC3339), oneLine(cp.Task))
		if cp.State != "" {
			fmt.Fprintf(&b, "- State: %s\n", oneLine(cp.State))
		}
		if cp.Next != "" {
			fmt.Fprintf(&b, "- Next: %s\n", oneLine(cp.Next))
		}
		if len(cp.Files) > 0 {
			fmt.Fprintf(&b, "- Files: %s\n", strings.Join(cp.Files, ", "))
		}
		if cp.Notes != "" {
			fmt.Fprintf(&b, "- Notes: %s\n", clip(oneLine(cp.Notes), promptBodyRunes))
		}
	}

	b.WriteString("\n## Current decisions\n")
	ds, err := l.ListDecisions(false)
	if err != nil {
		return "", err
	}
	if len(ds) == 0 {
		b.WriteString("No decisions recorded.\n")
	}
	for _, d := range ds {
		if d.Quarantine != "" {
			where := d.File
			if d.Line > 0 {
				where += ":" + strconv.Itoa(d.Line)
			}
			fmt.Fprintf(&b, "- %s [QUARANTINED: %s] (see %s, nexus decisions --raw) — %s, %s\n", d.ID, d.Quarantine, where, d.Agent, d.Time.Format("2006-01-02"))
			continue
		}
		fmt.Fprintf(&b, "- %s %s: %s", d.ID, d.Title, clip(oneLine(d.Decision), promptBodyRunes))
		if d.Supersedes != "" {
			fmt.Fprintf(&b, " (supersedes %s)", d.Supersedes)
		}
		fmt.Fprintf(&b, " — %s, %s\n", d.Agent, d.Time.Format("2006-01-02"))
	}
	return b.String(), nil
}

// PromptEntry renders one entry as a session-start prompt shows another
// agent's entry: a quarantined entry's text is replaced by a
// "[QUARANTINED: rule]" line naming where to read it.
func PromptEntry(e *Entry) string { return promptEntry(e) }

func promptEntry(e *Entry) string {
	if e.Quarantine != "" {
		who := e.Agent
		if who == "" {
			who = "(typed by hand, unsigned)"
		}
		return fmt.Sprintf("- %s %s %s\n", e.Time.Format(time.RFC3339), who, QuarantineNotice(e))
	}
	if e.Hand {
		return "- (typed by hand, unsigned) " + clip(oneLine(e.Body), promptBodyRunes) + "\n"
	}
	s := fmt.Sprintf("- %s %s [%s/%s] %s\n", e.Time.Format(time.RFC3339), e.Agent, e.Channel, e.Kind, e.Summary)
	if !e.Signed {
		s = "- (unsigned) " + s[2:]
	}
	if e.Body != "" {
		s += "  " + clip(oneLine(e.Body), promptBodyRunes) + "\n"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
