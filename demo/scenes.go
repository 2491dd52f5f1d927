package demo

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/retention"
)

// The 02:00 handoff, in English and Korean so that scene 6 can find it in
// both.
const (
	handoffSummary = "Fixed the login timeout on the API gateway; PR #123 merged and deployed"
	handoffBody    = "Ella: last night's signup-funnel numbers are skewed by the timeouts. Please re-run the analysis before the 10:00 planning.\n\n로그인 시간 초과 문제를 수정했습니다. 아침 10시 기획 회의 전에 가입 퍼널 분석을 다시 실행해 주세요."
)

// play runs the scenes in order.
func (d *demo) play(ctx context.Context) error {
	scenes := []struct {
		title string
		run   func(context.Context) error
	}{
		{"02:00 — a handoff through the live log", d.handoff},
		{"January to July — decisions", d.decisions},
		{"August — a crash mid-migration", d.crash},
		{"A fact about the user waits for review", d.review},
		{"Both agents write at the same instant", d.concurrent},
		{"Search, in English and in Korean", d.search},
	}
	for i, s := range scenes {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := d.opts.Now()
		if err := s.run(ctx); err != nil {
			return fmt.Errorf("scene %d (%s): %w", i+1, s.title, err)
		}
		el := d.opts.Now().Sub(start)
		d.res.Scenes = append(d.res.Scenes, Scene{Title: s.title, Elapsed: el})
		d.n.done(el)
	}
	return nil
}

// at moves the story clock to the given day and time of the story's year.
func (d *demo) at(month time.Month, day, hour, minute int) {
	d.clock.set(time.Date(d.opts.Start.Year(), month, day, hour, minute, 0, 0, time.UTC))
}

// newSession ends an agent's session (if any) and starts a new one, as a
// runtime does for a new conversation.
func (d *demo) newSession(ctx context.Context, agent string) (*session, error) {
	old := &d.lyra
	if agent == Ella {
		old = &d.ella
	}
	if *old != nil {
		(*old).close()
		*old = nil
	}
	s, err := connect(ctx, d.url, agent, d.res.Tokens[agent])
	if err != nil {
		return nil, err
	}
	*old = s
	return s, nil
}

// logEntry is the part of a log_append / log_read entry the demo reads.
type logEntry struct {
	Time    time.Time `json:"time"`
	Agent   string    `json:"agent"`
	Channel string    `json:"channel"`
	Kind    string    `json:"kind"`
	Summary string    `json:"summary"`
	Segment string    `json:"segment"`
	Line    int       `json:"line"`
}

func (e logEntry) String() string {
	return fmt.Sprintf("%s %s [%s/%s] %s", e.Time.Format(time.RFC3339), e.Agent, e.Channel, e.Kind, e.Summary)
}

// Scene 1: lyra hands off at 02:00; ella sees it before she answers.
func (d *demo) handoff(ctx context.Context) error {
	d.clock.set(d.opts.Start)
	d.n.scene(1, "02:00 — a handoff through the live log")
	lyra, err := d.newSession(ctx, Lyra)
	if err != nil {
		return err
	}
	var app struct {
		Entry logEntry `json:"entry"`
	}
	if _, err := lyra.callJSON(ctx, "log_append", map[string]any{
		"channel": "deploy", "kind": "handoff", "summary": handoffSummary, "body": handoffBody,
	}, &app); err != nil {
		return err
	}
	d.res.HandoffPath = app.Entry.Segment
	d.n.say("lyra ships a fix in the night and appends a signed entry to the live log (log_append):")
	d.n.quote(app.Entry.String(), 1)
	d.n.say("It lands in %s, signed with lyra's key and chained to the entry before it.", app.Entry.Segment)

	d.at(d.opts.Start.Month(), d.opts.Start.Day(), 8, 30)
	ella, err := d.newSession(ctx, Ella)
	if err != nil {
		return err
	}
	snap, err := ella.prompt(ctx, "session_start")
	if err != nil {
		return err
	}
	unread := section(snap, "## Unread log entries")
	if !strings.Contains(unread, handoffSummary) {
		return fmt.Errorf("ella's session_start does not show the handoff:\n%s", unread)
	}
	d.n.say("08:30 — ella's session starts. Before she answers anyone, session_start shows her:")
	d.n.quote(unread, 4)
	var read struct {
		Count   int        `json:"count"`
		Acked   bool       `json:"acked"`
		Entries []logEntry `json:"entries"`
	}
	if _, err := ella.callJSON(ctx, "log_read", map[string]any{"ack": true}, &read); err != nil {
		return err
	}
	if read.Count != 1 || !read.Acked || read.Entries[0].Summary != handoffSummary {
		return fmt.Errorf("ella's log_read returned %d entries (acked %v), want the handoff, acknowledged", read.Count, read.Acked)
	}
	if _, err := ella.callJSON(ctx, "log_read", map[string]any{}, &read); err != nil {
		return err
	}
	if read.Count != 0 {
		return fmt.Errorf("after the ack, log_read still returns %d entries", read.Count)
	}
	d.n.say("She reads it with log_read and acknowledges it: her read cursor moves past it, and a second log_read has nothing new.")
	if _, err := ella.call(ctx, "log_append", map[string]any{
		"channel": "deploy", "kind": "ack", "summary": "Thanks lyra — re-running the signup funnel analysis before planning",
	}); err != nil {
		return err
	}
	d.n.say("She answers in the log, so lyra's next session will see it.")
	return nil
}

// decision is the part of a decision the demo reads.
type decision struct {
	ID           string `json:"id"`
	Agent        string `json:"agent"`
	Title        string `json:"title"`
	Supersedes   string `json:"supersedes"`
	SupersededBy string `json:"superseded_by"`
}

// Scene 2: decisions made in January show in July's sessions; a later
// decision supersedes one.
func (d *demo) decisions(ctx context.Context) error {
	d.at(time.January, 20, 10, 0)
	d.n.scene(2, "January to July — decisions")
	var d1, d2, d3 decision
	if _, err := d.lyra.callJSON(ctx, "decision_record", map[string]any{
		"title":     "How service secrets are stored",
		"decision":  "Service secrets live in sops-encrypted files in the infra repository; no secret is ever written into the vault.",
		"rationale": "Changes are reviewed in pull requests, and there is no extra service to run.",
	}, &d1); err != nil {
		return err
	}
	if d.lyra.notice == "" {
		return fmt.Errorf("lyra's tool result carries no notice of ella's reply in the log")
	}
	d.n.say("lyra records how secrets are stored (decision_record). The tool result ends with the server's notice:")
	d.n.quote(d.lyra.notice, 1)
	var news struct {
		Entries []logEntry `json:"entries"`
	}
	if _, err := d.lyra.callJSON(ctx, "log_read", map[string]any{"ack": true}, &news); err != nil {
		return err
	}
	if len(news.Entries) != 1 || news.Entries[0].Agent != Ella {
		return fmt.Errorf("lyra's log_read returned %d entries, want ella's reply", len(news.Entries))
	}
	d.n.say("so before she replies to anyone she calls log_read and sees ella's answer: %q.", news.Entries[0].Summary)
	if _, err := d.ella.callJSON(ctx, "decision_record", map[string]any{
		"title":     "Secrets in research notebooks",
		"decision":  "Notebooks read credentials from environment variables filled from the same sops files; never pasted into notes.",
		"rationale": "One source of truth; notes get shared.",
	}, &d2); err != nil {
		return err
	}
	d.n.say("The decision log now holds lyra's %s \"%s\" and ella's %s \"%s\", both signed.", d1.ID, d1.Title, d2.ID, d2.Title)

	d.at(time.July, 6, 9, 0)
	for _, agent := range []string{Lyra, Ella} {
		s, err := d.newSession(ctx, agent)
		if err != nil {
			return err
		}
		snap, err := s.prompt(ctx, "session_start")
		if err != nil {
			return err
		}
		cur := section(snap, "## Current decisions")
		if !strings.Contains(cur, d1.ID) || !strings.Contains(cur, d2.ID) {
			return fmt.Errorf("%s's July session_start does not show %s and %s:\n%s", agent, d1.ID, d2.ID, cur)
		}
		if agent == Lyra {
			d.n.say("July. A new session of each agent; both snapshots carry the January decisions. lyra's:")
			d.n.quote(cur, 6)
		} else {
			d.n.say("ella's shows the same two.")
		}
	}

	d.at(time.July, 8, 15, 0)
	if _, err := d.lyra.callJSON(ctx, "decision_record", map[string]any{
		"title":      "How service secrets are stored (revised)",
		"decision":   "Service secrets move to the cloud secret manager; the sops files are read-only until removed.",
		"rationale":  "Rotation without a deploy, and an audit trail of every read.",
		"supersedes": d1.ID,
	}, &d3); err != nil {
		return err
	}
	d.n.say("Two days later lyra records %s, which supersedes %s.", d3.ID, d1.ID)
	var cur, all struct {
		Decisions []decision `json:"decisions"`
	}
	if _, err := d.ella.callJSON(ctx, "decision_list", map[string]any{}, &cur); err != nil {
		return err
	}
	if _, err := d.ella.callJSON(ctx, "decision_list", map[string]any{"all": true}, &all); err != nil {
		return err
	}
	var holds []string
	for _, x := range cur.Decisions {
		if x.ID == d1.ID {
			return fmt.Errorf("decision_list still lists the superseded %s", d1.ID)
		}
		holds = append(holds, x.ID)
	}
	supersededBy := ""
	for _, x := range all.Decisions {
		if x.ID == d1.ID {
			supersededBy = x.SupersededBy
		}
	}
	if supersededBy != d3.ID {
		return fmt.Errorf("decision_list all=true says %s is superseded by %q, want %s", d1.ID, supersededBy, d3.ID)
	}
	d.n.say("ella's decision_list shows which hold: %s. With all=true it also shows %s, superseded by %s — kept, never deleted.", strings.Join(holds, ", "), d1.ID, d3.ID)
	d.res.Decision, d.res.Superseded = d3.ID, d1.ID
	return nil
}

// migrationSteps is the length of lyra's migration; she saves a checkpoint
// every checkpointEvery steps and crashes during crashAt.
const (
	migrationSteps  = 10
	checkpointEvery = 3
	crashAt         = 8
)

// checkpoint is the part of a checkpoint the demo reads.
type checkpoint struct {
	Task  string `json:"task"`
	State string `json:"state"`
	Next  string `json:"next"`
	Path  string `json:"path"`
}

// Scene 3: lyra crashes mid-migration and resumes from her checkpoint.
func (d *demo) crash(ctx context.Context) error {
	d.at(time.August, 3, 14, 0)
	d.n.scene(3, "August — a crash mid-migration")
	const task = "Migrate the users table to schema v2"
	lyra := d.lyra
	for step := 1; step < crashAt; step++ {
		if step%checkpointEvery != 0 {
			continue
		}
		if _, err := lyra.call(ctx, "checkpoint_save", map[string]any{
			"task":  task,
			"state": fmt.Sprintf("steps %d-%d of %d done", 1, step, migrationSteps),
			"next":  fmt.Sprintf("step %d", step+1),
			"files": []string{"migrations/0042_users_v2.sql"},
			"notes": "Each step copies 10% of the rows; steps are idempotent.",
		}); err != nil {
			return err
		}
	}
	d.n.say("lyra works through a %d-step migration, saving a checkpoint every %d steps (checkpoint_save): after steps 3 and 6.", migrationSteps, checkpointEvery)
	d.n.say("During step %d her process dies: the MCP session drops without a goodbye.", crashAt)
	lyra.close()
	d.lyra = nil

	d.at(time.August, 3, 14, 20)
	lyra, err := d.newSession(ctx, Lyra)
	if err != nil {
		return err
	}
	snap, err := lyra.prompt(ctx, "session_start")
	if err != nil {
		return err
	}
	if !strings.Contains(section(snap, "## Latest checkpoint"), task) {
		return fmt.Errorf("lyra's session_start does not show her checkpoint")
	}
	var loaded struct {
		Found      bool       `json:"found"`
		Checkpoint checkpoint `json:"checkpoint"`
	}
	if _, err := lyra.callJSON(ctx, "checkpoint_load", map[string]any{}, &loaded); err != nil {
		return err
	}
	var resume int
	if _, err := fmt.Sscanf(loaded.Checkpoint.Next, "step %d", &resume); !loaded.Found || err != nil {
		return fmt.Errorf("checkpoint_load: found %v, next %q", loaded.Found, loaded.Checkpoint.Next)
	}
	d.n.say("20 minutes later a new session restarts her. Her session_start shows the checkpoint; checkpoint_load returns:")
	d.n.quote(fmt.Sprintf("task:  %s\nstate: %s\nnext:  %s", loaded.Checkpoint.Task, loaded.Checkpoint.State, loaded.Checkpoint.Next), 3)
	if resume != 7 {
		return fmt.Errorf("lyra would resume at step %d, want 7", resume)
	}
	var final checkpoint
	if _, err := lyra.callJSON(ctx, "checkpoint_save", map[string]any{
		"task":  task,
		"state": fmt.Sprintf("done: all %d steps (resumed at step %d after a crash during step %d)", migrationSteps, resume, crashAt),
		"next":  "none",
		"files": []string{"migrations/0042_users_v2.sql"},
	}, &final); err != nil {
		return err
	}
	d.n.say("She resumes at step %d — not at step 1 — finishes step %d, and saves the final checkpoint (%s; earlier ones kept as history).", resume, migrationSteps, final.Path)
	d.res.ResumedAt, d.res.Checkpoint = resume, final.Path
	return nil
}

// Scene 4: ella retains a fact about the user; the person approves it; it
// is in ella's memory index in her next session.
func (d *demo) review(ctx context.Context) error {
	d.at(time.August, 10, 11, 0)
	d.n.scene(4, "A fact about the user waits for review")
	var it struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Path   string `json:"path"`
		Target string `json:"target"`
	}
	if _, err := d.ella.callJSON(ctx, "retain", map[string]any{
		"name":        "Prefers Korean first",
		"description": "The user reads Korean first: answer in Korean, then English",
		"type":        "user",
		"body":        "The user asked for answers in Korean first, followed by the English, in every channel.",
		"source":      "conversation of 10 August",
	}, &it); err != nil {
		return err
	}
	if it.Status != retention.StatusPending {
		return fmt.Errorf("retain filed %s with status %q, want pending", it.ID, it.Status)
	}
	d.n.say("ella learns something about the user and proposes it (retain). It does not land yet: it waits in %s.", it.Path)

	d.at(time.August, 10, 18, 0)
	approved, err := retention.Approve(d.v, it.ID, retention.Decision{By: "you", Why: "Correct; the user said so.", Now: d.clock.Now()})
	if err != nil {
		return err
	}
	d.n.say("In the evening a person (the demo, acting as you — as 'nexus review approve %s' or status: approved in Obsidian would) approves it.", it.ID)
	d.n.say("It becomes the fact file %s; the proposal is archived in review/archive/.", approved.Result)

	d.at(time.August, 11, 9, 0)
	ella, err := d.newSession(ctx, Ella)
	if err != nil {
		return err
	}
	snap, err := ella.prompt(ctx, "session_start")
	if err != nil {
		return err
	}
	idx := section(snap, "MEMORY INDEX")
	if !strings.Contains(idx, "Prefers Korean first") {
		return fmt.Errorf("ella's next session_start has no memory-index line for the approved fact:\n%s", idx)
	}
	d.n.say("Next morning, ella's session_start carries it in her memory index:")
	d.n.quote(idx, 3)
	d.res.ReviewID, d.res.Fact = it.ID, approved.Result
	return nil
}

// Scene 5: both agents append at the same instant, Appends times each.
func (d *demo) concurrent(ctx context.Context) error {
	d.at(time.September, 1, 12, 0)
	d.n.scene(5, "Both agents write at the same instant")
	n := d.opts.Appends
	start := make(chan struct{})
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, s := range []*session{d.lyra, d.ella} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for k := 1; k <= n; k++ {
				if _, err := s.call(ctx, "log_append", map[string]any{
					"channel": "load", "kind": "status", "summary": fmt.Sprintf("%s status %d of %d", s.agent, k, n),
				}); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	began := d.opts.Now()
	close(start)
	wg.Wait()
	took := d.opts.Now().Sub(began)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	d.n.say("lyra and ella each call log_append %d times, starting at the same instant: %d appends in %s.", n, 2*n, took.Round(time.Millisecond))

	l, err := livelog.Open(d.v, livelog.Options{})
	if err != nil {
		return err
	}
	es, err := l.Read(livelog.ReadOptions{Channel: "load"})
	if err != nil {
		return err
	}
	seen := map[string]int{}
	for _, e := range es {
		seen[e.Summary]++
	}
	for _, agent := range []string{Lyra, Ella} {
		for k := 1; k <= n; k++ {
			if c := seen[fmt.Sprintf("%s status %d of %d", agent, k, n)]; c != 1 {
				return fmt.Errorf("%s's entry %d is in the log %d times, want once", agent, k, c)
			}
		}
	}
	rep, err := l.Verify(ctx)
	if err != nil {
		return err
	}
	if !rep.OK(true) {
		return fmt.Errorf("log verify after the concurrent appends: %d finding(s), first: %+v", len(rep.Findings), rep.Findings[0])
	}
	d.n.say("Every entry is in the log exactly once, none torn or interleaved, and 'nexus log verify' is clean: %d signed entries, each signature and chain link intact.", rep.Entries)
	d.res.Appended, d.res.LogEntries = 2*n, rep.Entries
	return nil
}

// hit is the part of a search hit the demo reads.
type hit struct {
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Snippet string `json:"snippet"`
	Kind    string `json:"kind"`
}

// Scene 6: a search finds the 02:00 handoff in English and in Korean.
func (d *demo) search(ctx context.Context) error {
	d.at(time.September, 2, 9, 0)
	d.n.scene(6, "Search, in English and in Korean")
	for _, q := range []string{"login timeout", "로그인 시간 초과"} {
		var res struct {
			Total int   `json:"total"`
			Hits  []hit `json:"hits"`
		}
		if _, err := d.ella.callJSON(ctx, "memory_search", map[string]any{"query": q, "maxResults": 3}, &res); err != nil {
			return err
		}
		if len(res.Hits) == 0 || res.Hits[0].Path != d.res.HandoffPath {
			return fmt.Errorf("memory_search %q: top hit %+v, want the handoff in %s", q, res.Hits, d.res.HandoffPath)
		}
		h := res.Hits[0]
		d.n.say("memory_search %q → %s:%d", q, h.Path, h.Line)
		d.n.quote(oneLine(h.Snippet, 110), 1)
	}
	return nil
}

// section returns the block of a session_start text that starts with the
// line containing heading ("## Unread log entries", or the title of a ═══
// box such as "MEMORY INDEX"), up to the next heading or box.
func section(text, heading string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if !strings.Contains(l, heading) {
			continue
		}
		out := []string{l}
		j := i + 1
		if j < len(lines) && strings.HasPrefix(lines[j], "═") {
			j++ // the box title's closing rule
		}
		for ; j < len(lines) && !strings.HasPrefix(lines[j], "═") && !strings.HasPrefix(lines[j], "## "); j++ {
			out = append(out, lines[j])
		}
		return strings.TrimRight(strings.Join(out, "\n"), "\n ")
	}
	return ""
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
