package livelog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

const (
	decisionsLock   = "livelog-decisions"
	decisionChannel = "decision"
	// MaxTitleRunes bounds a decision's title (one line).
	MaxTitleRunes = 200
)

// Decision is one entry of log/decisions.md. It is stored as a signed log
// entry in the decision chain: header "### TIME AGENT [decision/D-0001]
// TITLE", then the fields in the body:
//
//	**Decision:** what was decided (may span lines)
//
//	**Rationale:** why
//
//	**Supersedes:** D-0003
type Decision struct {
	ID         string    `json:"id"`
	Time       time.Time `json:"time"`
	Agent      string    `json:"agent"`
	Title      string    `json:"title"`
	Decision   string    `json:"decision"`
	Rationale  string    `json:"rationale,omitempty"`
	Supersedes string    `json:"supersedes,omitempty"`
	// SupersededBy is set in listings when a later decision supersedes
	// this one. The old decision stays in the file.
	SupersededBy string `json:"superseded_by,omitempty"`
	Signed       bool   `json:"signed"`
	Hash         string `json:"hash,omitempty"`
	Line         int    `json:"line"`
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
	d := Decision{ID: e.Kind, Time: e.Time, Agent: e.Agent, Title: e.Summary, Signed: e.Signed, Hash: e.Hash, Line: e.Line}
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

func validID(s string) bool {
	n, ok := strings.CutPrefix(s, "D-")
	if !ok || len(n) < 4 {
		return false
	}
	_, err := strconv.Atoi(n)
	return err == nil && !strings.HasPrefix(n, "-")
}

// Record signs d as agent and appends it to log/decisions.md with the next
// id (D-0001, D-0002, ...). Title is folded to one line; Decision is
// required, Rationale optional; Supersedes, if set, must name a recorded
// decision ([ErrNoDecision] otherwise). Time, ID and Agent are set by
// Record. The decision is on disk (fsynced) when Record returns.
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
	d.Supersedes = strings.ToUpper(strings.TrimSpace(d.Supersedes))
	if d.Supersedes != "" && !validID(d.Supersedes) {
		return d, fmt.Errorf("supersedes %q: want an id like D-0003: %w", d.Supersedes, vault.ErrInvalid)
	}
	s, err := l.signer(agent)
	if err != nil {
		return d, err
	}
	unlock, err := l.v.Lock(decisionsLock)
	if err != nil {
		return d, err
	}
	defer unlock()
	path := l.abs(vault.DecisionsLog)
	// Read stably: an empty read of a person's save in progress would
	// restart the numbering and the chain.
	data, err := vault.ReadStable(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return d, fmt.Errorf("read decisions: %w", err)
	}
	head, maxID, torn := genesis.String(), 0, false
	found := d.Supersedes == ""
	supersededBy := "" // which decision already replaced d.Supersedes
	p := newParser(data, 0, 1, streamDecisions, vault.DecisionsLog)
	for {
		e, ok := p.next()
		if !ok {
			break
		}
		torn = e.Torn
		if e.Signed && !e.Torn {
			head = e.Hash
		}
		if e.Channel == decisionChannel && validID(e.Kind) {
			n, _ := strconv.Atoi(e.Kind[2:])
			maxID = max(maxID, n)
			if e.Kind == d.Supersedes {
				found = true
			}
			if d.Supersedes != "" && e.Signed && decisionFrom(&e).Supersedes == d.Supersedes {
				supersededBy = e.Kind
			}
		}
	}
	if !found {
		return d, fmt.Errorf("supersedes %s: %w", d.Supersedes, ErrNoDecision)
	}
	if supersededBy != "" {
		// Two decisions replacing one would leave both "current".
		return d, fmt.Errorf("%s is already superseded by %s; supersede %s instead (or the decision that replaced it): %w",
			d.Supersedes, supersededBy, supersededBy, vault.ErrRefused)
	}
	now := l.opts.Now().UTC().Truncate(time.Second)
	d.ID, d.Time, d.Agent, d.SupersededBy = fmt.Sprintf("D-%04d", maxID+1), now, agent, ""
	e := Entry{Time: now, timeText: now.Format(timeLayout), Agent: agent, Channel: decisionChannel, Kind: d.ID,
		Summary: d.Title, Body: d.body(), stream: streamDecisions}
	prev, _ := parseHash(head)
	e.sign(s, prev)
	rec := append([]byte(tailPrefix(data, torn)), e.record()...)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		}
	}
	if err != nil {
		return d, fmt.Errorf("open decisions: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(rec); err != nil {
		return d, fmt.Errorf("append decision: %w", err)
	}
	if err := l.writeHint(decisionsHeadFile, pos{Segment: vault.DecisionsLog, Offset: int64(len(data) + len(rec)), Head: e.Hash}); err != nil {
		l.opts.Logger.Warn("decision log: head hint not written", "err", err)
	}
	if err := f.Sync(); err != nil {
		return d, fmt.Errorf("sync decisions: %w", err)
	}
	if len(data) == 0 {
		if err := vault.SyncDir(filepath.Dir(path)); err != nil {
			return d, err
		}
	}
	d.Signed, d.Hash = true, e.Hash
	d.Line = strings.Count(string(data), "\n") + strings.Count(string(rec[:len(rec)-len(e.record())]), "\n") + 1
	return d, nil
}

// tailPrefix returns what to write before a record appended after data:
// a torn marker after a torn tail, else enough newlines for a blank line.
func tailPrefix(data []byte, torn bool) string {
	if len(data) == 0 {
		return ""
	}
	if torn {
		return "\n" + tornMarker + "\n\n"
	}
	switch {
	case data[len(data)-1] != '\n':
		return "\n\n"
	case len(data) < 2 || data[len(data)-2] != '\n':
		return "\n"
	}
	return ""
}

// ListDecisions returns the decisions in log/decisions.md in order, each
// marked with the decision that supersedes it, if any. Unless all is set,
// superseded decisions are left out. Decisions a person typed in the same
// format are listed with Signed false.
func (l *Log) ListDecisions(all bool) ([]Decision, error) {
	data, err := os.ReadFile(l.abs(vault.DecisionsLog))
	if errors.Is(err, fs.ErrNotExist) {
		return []Decision{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read decisions: %w", err)
	}
	var ds []Decision
	p := newParser(data, 0, 1, streamDecisions, vault.DecisionsLog)
	for {
		e, ok := p.next()
		if !ok {
			break
		}
		if e.Torn || e.Hand || e.Channel != decisionChannel || !validID(e.Kind) {
			continue
		}
		ds = append(ds, decisionFrom(&e))
	}
	idx := map[string]int{}
	for i, d := range ds {
		idx[d.ID] = i
	}
	for _, d := range ds {
		if i, ok := idx[d.Supersedes]; ok && d.Supersedes != "" {
			ds[i].SupersededBy = d.ID
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
