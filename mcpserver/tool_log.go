package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

// maxLogRead bounds the entries one log_read returns.
const maxLogRead = 100

// Bounds the domain packages enforce without naming them.
const (
	maxAgentName      = 64                       // identity.ValidName
	maxDecisionText   = livelog.MaxBodyBytes / 2 // a decision's decision and rationale
	maxCheckpointFile = 1024                     // one path in a checkpoint's files
)

// logEntry is a live-log entry as tools show it: what an agent needs to
// read it, and where it is (for memory_get), without the signature fields.
type logEntry struct {
	Time    time.Time `json:"time,omitzero"`
	Agent   string    `json:"agent,omitempty"`
	Channel string    `json:"channel,omitempty"`
	Kind    string    `json:"kind,omitempty"`
	Summary string    `json:"summary"`
	Body    string    `json:"body,omitempty"`
	Signed  bool      `json:"signed"`
	Hand    bool      `json:"hand,omitempty"`
	Segment string    `json:"segment"`
	Line    int       `json:"line,omitempty"`
	// Writer is the feed (AGENT@DEVICE); Quarantine the rule a
	// quarantined entry hit (its text is then replaced by a notice).
	Writer     string `json:"writer,omitempty"`
	Quarantine string `json:"quarantine,omitempty"`
}

// toLogEntries shows entries to an agent: a quarantined entry's text is
// replaced by its "[QUARANTINED: rule]" notice.
func toLogEntries(es []livelog.Entry) []logEntry {
	out := make([]logEntry, 0, len(es))
	for _, e := range es {
		e = e.Masked()
		out = append(out, logEntry{Time: e.Time, Agent: e.Agent, Channel: e.Channel, Kind: e.Kind, Summary: e.Summary, Body: e.Body, Signed: e.Signed, Hand: e.Hand,
			Segment: e.Segment, Line: e.Line, Writer: e.Writer, Quarantine: e.Quarantine})
	}
	return out
}

// logReadResult is log_read's result, shaped like 'nexus log read --json'.
type logReadResult struct {
	Reader string `json:"reader"`
	// Unread is true for "what is new for me", false for the last-N view.
	Unread bool `json:"unread"`
	// Acked is true when the cursor moved past the returned entries.
	Acked   bool       `json:"acked"`
	Count   int        `json:"count"`
	Entries []logEntry `json:"entries"`
	// Remaining is how many unread entries are left for the next call.
	Remaining int `json:"remaining"`
}

func (s *Server) logTools() []tool {
	return []tool{
		{
			def: newTool("log_read", `Read the shared live log: by default the entries that are new for you (written by other agents or typed by a person since you last read), oldest first.

Call it at the start of a session and whenever a tool result ends with "N new log entries from ... — call log_read", before you reply, so you act on what the others did.
ack (default true) marks the returned entries as read, so the next call returns only newer ones; pass ack false to peek. At most 100 entries come back per call; remaining says how many more unread entries wait — call again to get them.
Pass last N (1-100) to see the newest N entries regardless of what you have read (your own included; nothing is acknowledged, ack and limit do not apply). channel, kind and from filter the last-N view and need last.
Returns {reader, unread, acked, count, entries: [{time, agent, channel, kind, summary, body, segment, line}], remaining}.`,
				objectSchema(fields{
					{"ack", boolProp("Mark the returned unread entries as read (default true).")},
					{"last", intRange("Instead of unread entries, return the newest N entries (1-100).", 1, maxLogRead)},
					{"limit", intRange("Most unread entries to return (default and maximum 100).", 1, maxLogRead)},
					{"channel", strLen("With last: only this channel.", 0, livelog.MaxLabelRunes)},
					{"kind", strLen("With last: only this kind.", 0, livelog.MaxLabelRunes)},
					{"from", strLen("With last: only entries by this agent.", 0, maxAgentName)},
				}),
				hints{title: "Read the live log"}),
			run: s.logRead,
		},
		{
			def: newTool("log_append", `Append a signed entry to the shared live log that every agent reads before replying.

Use it to tell the other agents what you did, found, started or need: a one-line summary (what a reader must know) and, if useful, a markdown body with details. It is signed with your key and chained to the previous entry; it cannot be edited later, so write nothing secret.
channel groups entries (default "general"; e.g. a project name); kind says what it is (default "note"; e.g. status, question, handoff, result).
key (optional) makes a retry safe: an append whose key your feed already holds writes nothing and returns the earlier entry with duplicate true.
Returns {entry: {time, agent, channel, kind, summary, body, segment, line}, notes, duplicate}.`,
				objectSchema(fields{
					{"summary", strLen("One line (at most 500 characters): what happened or what you need.", 1, livelog.MaxSummaryRunes)},
					{"body", strLen("Optional details in markdown (at most 1 MiB).", 0, livelog.MaxBodyBytes)},
					{"channel", strLen(`Channel (default "general"): letters, digits, '-', '_' and '.', at most 64.`, 0, livelog.MaxLabelRunes)},
					{"kind", strLen(`Kind of entry (default "note"), e.g. status, question, handoff, result: letters, digits, '-', '_' and '.', at most 64.`, 0, livelog.MaxLabelRunes)},
					{"key", strLen("Idempotency key (at most 128 bytes), e.g. the id of the turn: a second append with the same key writes nothing.", 0, livelog.MaxKeyLen)},
				}, "summary"),
				hints{title: "Append to the live log"}),
			run: s.logAppend,
		},
		{
			def: newTool("decision_record", `Record a decision in the shared decision log (your decision feed log/decisions/YOU@DEVICE.md), signed by you, with the next id of your feed (lyra@vps:D-0001, ...).

Use it when you and the user or other agents settle something others must follow: a choice of approach, a convention, a scope cut. Give a short title, the decision itself and the rationale. To change an earlier decision, record a new one with supersedes set to the old id; the old one stays in the file, marked superseded.
Returns the decision {id, time, agent, title, decision, rationale, supersedes}.`,
				objectSchema(fields{
					{"title", strLen("Short title (one line, at most 200 characters).", 1, livelog.MaxTitleRunes)},
					{"decision", strLen("What was decided.", 1, maxDecisionText)},
					{"rationale", strLen("Why.", 0, maxDecisionText)},
					{"supersedes", strLen("Id of the earlier decision this replaces, e.g. lyra@vps:D-0003.", 0, 256)},
				}, "title", "decision"),
				hints{title: "Record a decision"}),
			run: s.decisionRecord,
		},
		{
			def: newTool("decision_list", `List the decisions in the shared decision log, oldest first: by default only the current ones (not superseded); all true includes superseded decisions, each with superseded_by.

Check it before proposing a change of approach, so you follow what was decided.
Returns {decisions: [{id, time, agent, title, decision, rationale, supersedes, superseded_by}]}.`,
				objectSchema(fields{
					{"all", boolProp("Include superseded decisions (default false).")},
				}),
				hints{title: "List decisions", readOnly: true, idempotent: true}),
			run: s.decisionList,
		},
		{
			def: newTool("checkpoint_save", `Save your work checkpoint (agents/YOU/checkpoints/CURRENT.md), replacing the previous one, which is kept as history.

Save one during long work — after each meaningful step and before anything risky — so you (or a new session) can resume after a crash: the task, where it stands, the next step, the files touched and free notes.
Returns the saved checkpoint {agent, time, task, state, next, files, notes, path}.`,
				objectSchema(fields{
					{"task", strLen("The task you are working on.", 1, livelog.MaxCheckpointField)},
					{"state", strLen("Where it stands: what is done, what is half done.", 0, livelog.MaxCheckpointField)},
					{"next", strLen("The next step to take.", 0, livelog.MaxCheckpointField)},
					{"files", prop{"type": "array", "items": prop{"type": "string", "maxLength": maxCheckpointFile}, "maxItems": livelog.MaxCheckpointFiles, "description": "Files touched (paths)."}},
					{"notes", strLen("Anything else needed to resume.", 0, livelog.MaxCheckpointNotes)},
				}, "task"),
				// Not destructive: the previous checkpoint is kept as
				// history, so a save only adds.
				hints{title: "Save a checkpoint"}),
			run: s.checkpointSave,
		},
		{
			def: newTool("checkpoint_load", `Load your latest work checkpoint, to resume a task after a crash or in a new session.

Returns {found: true, checkpoint: {agent, time, task, state, next, files, notes, path}}, or {found: false} when you have never saved one.`,
				objectSchema(fields{}),
				hints{title: "Load your checkpoint", readOnly: true, idempotent: true}),
			run: s.checkpointLoad,
		},
	}
}

func (s *Server) logRead(ctx context.Context, c *call) (any, error) {
	ack := c.boolean("ack", true)
	last := c.integer("last", 0, 1, maxLogRead) // absent: the unread view
	limit := c.integer("limit", maxLogRead, 1, maxLogRead)
	channel := strings.TrimSpace(c.str("channel", false))
	kind := strings.TrimSpace(c.str("kind", false))
	from := strings.TrimSpace(c.str("from", false))
	if c.err != nil {
		return nil, c.err
	}
	if last > 0 {
		es, err := s.lg.Read(livelog.ReadOptions{Last: last, Channel: channel, Kind: kind, From: from})
		if err != nil {
			return nil, err
		}
		return logReadResult{Reader: c.agent, Entries: toLogEntries(es), Count: len(es)}, nil
	}
	if channel != "" || kind != "" || from != "" {
		return nil, fmt.Errorf("channel, kind and from filter the last-N view; pass last too: %w", vault.ErrInvalid)
	}
	es, remaining, err := s.lg.ReadUnreadLimit(c.agent, limit, ack)
	if ack {
		s.unread.invalidate()
	}
	if err != nil {
		return nil, err
	}
	res := logReadResult{Reader: c.agent, Unread: true, Remaining: remaining, Acked: ack && len(es) > 0}
	res.Entries, res.Count = toLogEntries(es), len(es)
	return res, nil
}

func (s *Server) logAppend(ctx context.Context, c *call) (any, error) {
	e := livelog.Entry{
		Summary: c.str("summary", true),
		Body:    c.str("body", false),
		Channel: strings.TrimSpace(c.str("channel", false)),
		Kind:    strings.TrimSpace(c.str("kind", false)),
		Key:     c.str("key", false),
	}
	if c.err != nil {
		return nil, c.err
	}
	if len(e.Key) > livelog.MaxKeyLen {
		return nil, fmt.Errorf("key is %d bytes, at most %d: %w", len(e.Key), livelog.MaxKeyLen, vault.ErrInvalid)
	}
	r, err := s.lg.AppendDetailed(c.agent, e)
	s.unread.invalidate()
	if err != nil {
		return nil, err
	}
	return logAppended{toLogEntries([]livelog.Entry{r.Entry})[0], r.Notes, r.Duplicate}, nil
}

// logAppended is log_append's result.
type logAppended struct {
	Entry logEntry `json:"entry"`
	Notes []string `json:"notes,omitempty"`
	// Duplicate: the key was already in the agent's feed; nothing was
	// written and Entry is the earlier entry.
	Duplicate bool `json:"duplicate,omitempty"`
}

func (s *Server) decisionRecord(ctx context.Context, c *call) (any, error) {
	d := livelog.Decision{
		Title:      c.str("title", true),
		Decision:   c.str("decision", true),
		Rationale:  c.str("rationale", false),
		Supersedes: strings.TrimSpace(c.str("supersedes", false)),
	}
	if c.err != nil {
		return nil, c.err
	}
	d, err := s.lg.Record(c.agent, d)
	if err != nil {
		return nil, err
	}
	return d, nil
}

func (s *Server) decisionList(ctx context.Context, c *call) (any, error) {
	all := c.boolean("all", false)
	if c.err != nil {
		return nil, c.err
	}
	ds, err := s.lg.ListDecisions(all)
	if err != nil {
		return nil, err
	}
	if ds == nil {
		ds = []livelog.Decision{}
	}
	for i := range ds {
		if ds[i].Quarantine != "" {
			ds[i].Title, ds[i].Decision, ds[i].Rationale = "[QUARANTINED: "+ds[i].Quarantine+"] (see "+ds[i].File+", nexus decisions --raw)", "", ""
		}
	}
	return decisionList{ds}, nil
}

// decisionList is decision_list's result.
type decisionList struct {
	Decisions []livelog.Decision `json:"decisions"`
}

func (s *Server) checkpointSave(ctx context.Context, c *call) (any, error) {
	cp := livelog.Checkpoint{
		Task:  c.str("task", true),
		State: c.str("state", false),
		Next:  c.str("next", false),
		Files: c.strs("files"),
		Notes: c.str("notes", false),
	}
	if c.err != nil {
		return nil, c.err
	}
	cp, err := livelog.SaveCheckpoint(s.vault(), c.agent, cp, s.now())
	if err != nil {
		return nil, err
	}
	return cp.Masked(), nil
}

type checkpointLoaded struct {
	Found      bool                `json:"found"`
	Checkpoint *livelog.Checkpoint `json:"checkpoint,omitempty"`
	Message    string              `json:"message,omitempty"`
}

func (s *Server) checkpointLoad(ctx context.Context, c *call) (any, error) {
	cp, err := livelog.LoadCheckpoint(s.vault(), c.agent)
	if errors.Is(err, livelog.ErrNoCheckpoint) {
		return checkpointLoaded{Message: "no checkpoint saved yet; save one with checkpoint_save during long work"}, nil
	}
	if err != nil {
		return nil, err
	}
	m := cp.Masked() // the checkpoint goes into a prompt
	return checkpointLoaded{Found: true, Checkpoint: &m}, nil
}
