package livelog

import (
	"fmt"
	"strings"
	"time"
)

// promptBodyRunes bounds how much of an entry's body the prompt shows.
const promptBodyRunes = 300

// PromptEntry renders one entry as a session-start prompt shows another
// agent's entry: a quarantined entry's text is replaced by a
// "[QUARANTINED: rule]" line naming where to read it.
func PromptEntry(e *Entry) string {
	if e.Quarantine == "" {
		m := e.Masked() // scanned as it is shown
		e = &m
	}
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
	s := fmt.Sprintf("- %s %s [%s/%s] %s\n", e.Time.Format(time.RFC3339), e.Agent, e.Channel, e.Kind, oneLine(e.Summary))
	if !e.Signed {
		s = "- (unsigned) " + s[2:]
	}
	if e.Body != "" {
		s += "  " + clip(oneLine(e.Body), promptBodyRunes) + "\n"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
