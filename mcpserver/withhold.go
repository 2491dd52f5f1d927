package mcpserver

import (
	"strings"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/internal/scan"
)

// Vault text an agent reads — a note through memory_get or as a
// resource, a fact through fact_read — is scanned as it is returned
// (docs/scan.md, "At read time"): files reach the vault without Nexus's
// write scan (a sync tool, a person's paste, Obsidian), and a rule added
// since catches what an earlier scan let through. A paragraph or key block
// that fails is withheld whole, one marker in its place; control
// characters and invisible code points (but emoji sequences) are dropped.

// noteMark returns the marker function for a note's withheld lines.
func noteMark(clean string) func(rule string, first, last int) string {
	return func(rule string, first, last int) string {
		return scan.Withheld(rule, scan.LineRange(first, last)+" of "+clean, "a person can read the file itself")
	}
}

// shownNote returns a whole note's text as an agent may read it.
func shownNote(clean, text string) string {
	text, _ = scan.Withhold(text, noteMark(clean))
	return scan.Shown(text)
}

// shownLines returns lines[lo:hi] of a note (each with its "\n") joined,
// as an agent may read them: each paragraph reaching into the range is
// judged whole.
func shownLines(clean string, lines []string, lo, hi int) string {
	out, _ := scan.WithholdLines(lines, lo, hi, noteMark(clean))
	return scan.Shown(strings.Join(out, ""))
}

// shownFact is [agents.ShownFact]: the fact as an agent may read it.
func shownFact(f agents.Fact) agents.Fact { return agents.ShownFact(f) }
