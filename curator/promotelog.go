package curator

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/internal/scan"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// maxLogEntryRunes bounds the text a log promotion proposes (summary and
// the start of the body), before its source note.
const maxLogEntryRunes = 200

// promoteLogs proposes, for agent's MEMORY.md, the log entries agent read
// after searches at least promote_recalls times from at least
// promote_queries distinct queries. Each entry is re-read from its feed
// now: one gone, quarantined, or failing the scan is not proposed. It
// shares the per-pass bound (n) and the room under the threshold with the
// fact promotions.
func promoteLogs(v *vault.Vault, agent string, rec *agents.RecallSummary, m *agents.Memory, entries []string, room, n *int, over bool, waiting, rejected map[string]bool, props *[]Proposal) []string {
	logs := rec.LogEntries(agent)
	if len(logs) == 0 || over {
		return nil
	}
	cfg := v.Config().Curator
	keys := make([]string, 0, len(logs))
	for k, u := range logs {
		if u.SearchReads >= cfg.PromoteRecalls() && len(u.Queries) >= cfg.PromoteQueries() {
			keys = append(keys, k)
		}
	}
	// Most recalled first, then by name (deterministic).
	sort.Slice(keys, func(i, j int) bool {
		if a, b := logs[keys[i]].SearchReads, logs[keys[j]].SearchReads; a != b {
			return a > b
		}
		return keys[i] < keys[j]
	})
	var notes []string
	for _, k := range keys {
		if *n >= maxPromotesPerPass {
			break
		}
		if waiting["promote-log:"+k] || rejected["promote-log/"+agent+"/"+k] {
			continue
		}
		prop, note := logPromoteProposal(v, agent, k, *logs[k], m, entries, *room)
		if note != "" {
			notes = append(notes, note)
		}
		if prop != nil {
			*props = append(*props, *prop)
			*room -= utf8.RuneCountInString(prop.plan.Ops[0].Content) + 3
			*n++
		}
	}
	return notes
}

// logSource is the note a promoted log entry ends with; it names the entry
// so that a pass sees it is already in memory.
func logSource(path string, line int) string {
	return "(log " + path + ":" + strconv.Itoa(line) + ")"
}

func logPromoteProposal(v *vault.Vault, agent, key string, u agents.Use, m *agents.Memory, entries []string, room int) (*Proposal, string) {
	i := strings.LastIndexByte(key, '#')
	if i < 0 {
		return nil, ""
	}
	rel, lineStr := key[:i], key[i+1:]
	line, err := strconv.Atoi(lineStr)
	if err != nil || !livelog.IsLogFile(rel) {
		return nil, ""
	}
	src := logSource(rel, line)
	for _, e := range entries {
		if strings.Contains(e, src) {
			return nil, "" // already in memory
		}
	}
	abs, err := v.Path(rel)
	if err != nil {
		return nil, ""
	}
	data, err := vault.ReadFile(abs)
	if err != nil {
		return nil, fmt.Sprintf("%s: log entry %s:%d qualifies for promotion but its feed cannot be read (%v); not proposed", agent, rel, line, err)
	}
	var ent *livelog.Entry
	for _, e := range livelog.ParseFeed(rel, data) {
		if e.Line == line {
			ent = &e
			break
		}
	}
	if ent == nil || strings.TrimSpace(ent.Summary) == "" {
		return nil, fmt.Sprintf("%s: log entry %s:%d qualifies for promotion but is no longer there; not proposed", agent, rel, line)
	}
	if ent.Quarantine != "" {
		return nil, fmt.Sprintf("%s: log entry %s:%d qualifies for promotion but is quarantined (%s); not proposed", agent, rel, line, ent.Quarantine)
	}
	text := logEntryText(ent) + " " + src
	if err := scan.Text(text); err != nil {
		return nil, fmt.Sprintf("%s: log entry %s:%d qualifies for promotion but its text fails the security scan (%v); not proposed", agent, rel, line, err)
	}
	if utf8.RuneCountInString(text)+3 > room {
		return nil, fmt.Sprintf("%s: log entry %s:%d qualifies for promotion but MEMORY.md has no room under its threshold", agent, rel, line)
	}
	ops := []agents.Op{{Action: agents.ActionAdd, Content: text}}
	if _, err := m.Check(ops...); err != nil {
		return nil, ""
	}
	who := ent.Writer
	if who == "" {
		who = ent.Agent
	}
	if who == "" {
		who = "a person (unsigned text)"
	}
	p := &Proposal{Kind: retention.KindPromote, Agent: agent, Summary: fmt.Sprintf("add log entry %s:%d to MEMORY.md", rel, line)}
	p.plan = curatorPlan{Kind: retention.KindPromote, Agent: agent, Target: string(agents.TargetMemory), Ops: ops, Log: []string{key}}
	p.Evidence = []string{
		fmt.Sprintf("log entry %s:%d, written by %s at %s: read by %s after %d searches from %d distinct queries (promote at %d from %d): %s", rel, line, who, fmtWhen(ent), agent,
			u.SearchReads, len(u.Queries), v.Config().Curator.PromoteRecalls(), v.Config().Curator.PromoteQueries(), useEvidence(u)),
		"re-read from the feed when proposed: not quarantined, passes the security scan",
	}
	p.Diff = m.Path() + ":\n" + prefixLines("+ ", text)
	return p, ""
}

func fmtWhen(e *livelog.Entry) string {
	if e.Time.IsZero() {
		return "an unknown time"
	}
	return e.Time.UTC().Format("2006-01-02 15:04 UTC")
}

// logEntryText is an entry's summary and, if room is left, the start of
// its body, on one line, at most maxLogEntryRunes runes.
func logEntryText(e *livelog.Entry) string {
	text := oneLine(e.Summary)
	if body := oneLine(e.Body); body != "" && !e.Hand {
		text += " — " + body
	}
	if utf8.RuneCountInString(text) > maxLogEntryRunes {
		r := []rune(text)
		text = strings.TrimSpace(string(r[:maxLogEntryRunes-1])) + "…"
	}
	return text
}

// oneLine folds whitespace (newlines included) to single spaces, and
// drops a leading "§" so the text cannot read as an entry separator.
func oneLine(s string) string {
	return strings.TrimLeft(strings.Join(strings.Fields(s), " "), "§")
}
