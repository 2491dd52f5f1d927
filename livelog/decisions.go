package livelog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/internal/scan"
	"github.com/nexus-memory/nexus/vault"
)

const (
	decisionsLock   = "livelog-decisions"
	decisionChannel = "decision"
	// MaxTitleRunes bounds a decision's title (one line).
	MaxTitleRunes = 200
)

// Decision is one entry of a decision feed (log/decisions/WRITER.md, or
// an older vault's log/decisions.md). It is stored as a signed entry of
// the decision log: header "### TIME AGENT [decision/D-0001] TITLE", then
// the fields in the body:
//
//	**Decision:** what was decided (may span lines)
//
//	**Rationale:** why
//
//	**Supersedes:** lyra@vps:D-0003
//
// Its id is the writer and the number in the writer's decision feed,
// "lyra@vps:D-0001", so two machines never issue the same id. Decisions
// of an older vault keep their ids ("D-0001").
type Decision struct {
	ID         string    `json:"id"`
	Time       time.Time `json:"time"`
	Agent      string    `json:"agent"`
	Writer     string    `json:"writer,omitempty"`
	Title      string    `json:"title"`
	Decision   string    `json:"decision"`
	Rationale  string    `json:"rationale,omitempty"`
	Supersedes string    `json:"supersedes,omitempty"`
	// SupersededBy is set in listings when a later decision supersedes
	// this one. The old decision stays in its file.
	SupersededBy string `json:"superseded_by,omitempty"`
	// Conflict lists the other decisions that supersede the same decision
	// as this one (made on two machines at once): all are kept and shown
	// for a person, or a later decision, to resolve.
	Conflict []string `json:"conflict,omitempty"`
	// Quarantine names the security rule the decision's text hit when it
	// was recorded; prompts show a "[QUARANTINED: rule]" line instead.
	Quarantine string `json:"quarantine,omitempty"`
	Signed     bool   `json:"signed"`
	Hash       string `json:"hash,omitempty"`
	File       string `json:"file,omitempty"`
	Line       int    `json:"line"`
}

var decisionLabels = [...]string{"**Decision:**", "**Rationale:**", "**Supersedes:**"}

func labelOf(line string) int {
	for i, l := range decisionLabels {
		if strings.HasPrefix(line, l) {
			return i
		}
	}
	return -1
}

// escapeField protects field lines that would read as a label.
func escapeField(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if labelOf(strings.TrimLeft(l, `\`)) >= 0 {
			lines[i] = `\` + l
		}
	}
	return strings.Join(lines, "\n")
}

func unescapeField(line string) string {
	if strings.HasPrefix(line, `\`) && labelOf(strings.TrimLeft(line, `\`)) >= 0 {
		return line[1:]
	}
	return line
}

func (d *Decision) body() string {
	var b strings.Builder
	b.WriteString(decisionLabels[0] + " " + escapeField(d.Decision))
	if d.Rationale != "" {
		b.WriteString("\n\n" + decisionLabels[1] + " " + escapeField(d.Rationale))
	}
	if d.Supersedes != "" {
		b.WriteString("\n\n" + decisionLabels[2] + " " + d.Supersedes)
	}
	return b.String()
}

func decisionFrom(e *Entry) Decision {
	d := Decision{ID: e.Kind, Time: e.Time, Agent: e.Agent, Writer: e.Writer, Title: e.Summary, Signed: e.Signed, Hash: e.Hash,
		File: e.Segment, Line: e.Line, Quarantine: e.Quarantine}
	if e.feed && e.Writer != "" {
		d.ID = e.Writer + ":" + e.Kind
	}
	var fields [3][]string
	cur := 0
	for _, l := range strings.Split(e.Body, "\n") {
		if i := labelOf(l); i >= 0 {
			cur = i
			l = strings.TrimPrefix(l[len(decisionLabels[i]):], " ")
		} else {
			l = unescapeField(l)
		}
		fields[cur] = append(fields[cur], l)
	}
	get := func(i int) string { return strings.TrimSpace(strings.Join(fields[i], "\n")) }
	d.Decision, d.Rationale, d.Supersedes = get(0), get(1), get(2)
	return d
}

// normalizeID accepts "D-0003" (an older vault's id, any case) and
// "WRITER:D-0003".
func normalizeID(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if w, n, ok := strings.Cut(s, ":"); ok {
		n = strings.ToUpper(n)
		return w + ":" + n, ValidWriter(w) && validID(n)
	}
	s = strings.ToUpper(s)
	return s, validID(s)
}

func validID(s string) bool {
	n, ok := strings.CutPrefix(s, "D-")
	if !ok || len(n) < 4 {
		return false
	}
	_, err := strconv.Atoi(n)
	return err == nil && !strings.HasPrefix(n, "-")
}

// Record signs d as agent and appends it to agent's decision feed on this
// machine (log/decisions/AGENT@DEVICE.md) with the next id of that feed
// (lyra@vps:D-0001, ...). Title is folded to one line; Decision is
// required, Rationale optional; Supersedes, if set, must name a recorded
// decision ([ErrNoDecision] otherwise) that no decision here supersedes
// yet. Time, ID and Agent are set by Record. The decision is on disk
// (fsynced) when Record returns.
func (l *Log) Record(agent string, d Decision) (Decision, error) {
	if err := identity.ValidName(agent); err != nil {
		return d, err
	}
	if err := checkField("title", d.Title, 0); err != nil {
		return d, err
	}
	d.Title, _ = foldLine(d.Title)
	if n := utf8.RuneCountInString(d.Title); n > MaxTitleRunes {
		return d, fmt.Errorf("title is %d characters, more than the %d allowed: %w", n, MaxTitleRunes, ErrTooLarge)
	}
	if err := checkField("decision", d.Decision, MaxBodyBytes/2); err != nil {
		return d, err
	}
	d.Decision, _ = normalizeBody(d.Decision)
	if strings.TrimSpace(d.Rationale) != "" {
		if err := checkField("rationale", d.Rationale, MaxBodyBytes/2); err != nil {
			return d, err
		}
		d.Rationale, _ = normalizeBody(d.Rationale)
	} else {
		d.Rationale = ""
	}
	if d.Supersedes != "" {
		id, ok := normalizeID(d.Supersedes)
		if !ok {
			return d, fmt.Errorf("supersedes %q: want an id like lyra@vps:D-0003 (or D-0003 from an older vault): %w", d.Supersedes, vault.ErrInvalid)
		}
		d.Supersedes = id
	}
	var q Entry
	if err := quarantineCheck(&q, scan.PlaceDecision, "title", d.Title, "decision", d.Decision, "rationale", d.Rationale); err != nil {
		return d, err
	}
	writer, err := l.Writer(agent)
	if err != nil {
		return d, err
	}
	if d.Supersedes != "" {
		all, err := l.ListDecisions(true)
		if err != nil {
			return d, err
		}
		found := false
		for _, x := range all {
			if x.ID == d.Supersedes {
				found = true
				if x.SupersededBy != "" {
					// Two decisions replacing one would leave both current.
					return d, fmt.Errorf("%s is already superseded by %s; supersede %s instead (or the decision that replaced it): %w",
						d.Supersedes, x.SupersededBy, x.SupersededBy, vault.ErrRefused)
				}
			}
		}
		if !found {
			return d, fmt.Errorf("supersedes %s: %w", d.Supersedes, ErrNoDecision)
		}
	}
	d.Agent, d.Writer, d.SupersededBy, d.Conflict = agent, writer, "", nil
	e := &Entry{Agent: agent, Channel: decisionChannel, Summary: d.Title, Body: d.body(), Quarantine: q.Quarantine, stream: streamDecisions, feed: true}
	if _, err := l.appendFeed(streamDecisions, agent, writer, []*Entry{e}, func(e *Entry, seq int64) error {
		e.Kind = fmt.Sprintf("D-%04d", seq)
		return nil
	}); err != nil {
		return d, err
	}
	d.ID, d.Time, d.Signed, d.Hash, d.File, d.Quarantine = writer+":"+e.Kind, e.Time, true, e.Hash, e.Segment, e.Quarantine
	return d, nil
}

// ListDecisions returns the decisions of every decision feed (and of an
// older vault's log/decisions.md), in the log's one order, each marked
// with the decision that supersedes it. Unless all is set, superseded
// decisions are left out. Two decisions that supersede the same one (made
// on two machines) are both kept and marked with Conflict. Decisions a
// person typed in the same format are listed with Signed false.
func (l *Log) ListDecisions(all bool) ([]Decision, error) {
	files, err := l.decisionFiles()
	if err != nil {
		return nil, err
	}
	var srcs []*source
	for _, lf := range files {
		it, err := l.openIter(lf.rel, streamDecisions, 0, true)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			closeSources(srcs)
			return nil, fmt.Errorf("read decisions: %w", err)
		}
		srcs = append(srcs, &source{lf: lf, writer: lf.writer, it: it})
	}
	defer closeSources(srcs)
	cl := l.cleared()
	var ds []Decision
	err = merge(context.Background(), srcs, func(e *Entry, _ *source) error {
		if e.Torn || e.Hand || e.Channel != decisionChannel || !validID(e.Kind) {
			return nil
		}
		cl.apply(e)
		e.readScan() // decisions reach every prompt: scanned as they are read
		ds = append(ds, decisionFrom(e))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read decisions: %w", err)
	}
	idx := map[string]int{}
	for i, d := range ds {
		if _, dup := idx[d.ID]; !dup {
			idx[d.ID] = i
		}
	}
	by := map[string][]string{} // superseded id -> the decisions superseding it
	for _, d := range ds {
		if d.Supersedes != "" {
			if _, ok := idx[d.Supersedes]; ok {
				by[d.Supersedes] = append(by[d.Supersedes], d.ID)
			}
		}
	}
	for old, news := range by {
		ds[idx[old]].SupersededBy = news[0]
		if len(news) > 1 {
			ds[idx[old]].Conflict = news
			for _, n := range news {
				i := idx[n]
				for _, o := range news {
					if o != n {
						ds[i].Conflict = append(ds[i].Conflict, o)
					}
				}
			}
		}
	}
	out := []Decision{}
	for _, d := range ds {
		if all || d.SupersededBy == "" {
			out = append(out, d)
		}
	}
	return out, nil
}
