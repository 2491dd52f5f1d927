package agents

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/internal/scan"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

// blockRule is the frame line above and below each block of the
// session-start render: 46 "═", as Hermes Agent draws it.
var blockRule = strings.Repeat("═", 46)

// Block titles of the session-start render.
const (
	titleMemory = "MEMORY (your personal notes)"
	titleUser   = "USER PROFILE (who the user is)"
)

// RenderSnapshot renders the session-start view of an agent (the "frozen
// snapshot"): its identity (the body of IDENTITY.md, frontmatter left out),
// then the MEMORY.md and USER.md blocks exactly as Hermes Agent renders them,
// then the memory index of fact files (see [RenderIndex]). Empty files are
// left out. Entries that fail the security scan appear as
// their [BLOCKED: ...] line. Take it once per session: writes during the
// session do not change what the agent was shown.
//
// The result ends with a newline; blocks are separated by a blank line.
func RenderSnapshot(v *vault.Vault, agent string) (string, error) {
	p, err := RenderPrompt(v, agent, PromptOptions{Only: SnapshotSections()})
	if err != nil {
		return "", err
	}
	return p.Text(), nil
}

// RenderSessionStart renders everything an agent is given at the start of
// a session (the MCP prompt session_start, 'nexus prompt'): the
// [RenderSnapshot] blocks, then its unread live-log entries (the newest
// prompt_log_entries of them), latest checkpoint and current decisions.
// It reads only: nothing is acknowledged.
func RenderSessionStart(v *vault.Vault, agent string) (string, error) {
	p, err := RenderPrompt(v, agent, PromptOptions{})
	if err != nil {
		return "", err
	}
	return p.Text(), nil
}

// RenderIdentityBlock renders an agent's identity for the session-start
// render, framed like the memory blocks:
//
//	══════════════════════════════════════════════
//	IDENTITY (who you are: agents/lyra/IDENTITY.md)
//	══════════════════════════════════════════════
//	# lyra
//	...
//
// A paragraph failing the security scan (a person's edit, or one a sync
// tool brought from another machine) is shown as its [BLOCKED: ...] line,
// like a memory entry. It returns "" for an identity with an empty body.
func RenderIdentityBlock(id *identity.Identity) string {
	if id == nil {
		return ""
	}
	body := strings.TrimSpace(strings.ReplaceAll(id.Body, "\r\n", "\n"))
	if body == "" {
		return ""
	}
	path := identity.IdentityPath(id.Name)
	paras := strings.Split(body, "\n\n")
	for i, p := range paras {
		if rule := scan.RuleOf(p); rule != "" {
			paras[i] = fmt.Sprintf("[BLOCKED: %s — a paragraph of %s failed the security scan and is left out; edit the file to remove it]", rule, path)
		}
	}
	title := fmt.Sprintf("IDENTITY (who you are: %s)", path)
	return blockRule + "\n" + title + "\n" + blockRule + "\n" + strings.Join(paras, "\n\n")
}

// RenderMemoryBlock renders one bounded-memory file for the session-start
// render, byte for byte as Hermes Agent does:
//
//	══════════════════════════════════════════════
//	MEMORY (your personal notes) [67% — 1,474/2,200 chars]
//	══════════════════════════════════════════════
//	entry one
//	§
//	entry two
//
// The usage counts the entries as they are on disk; entries failing the
// security scan are shown as their [BLOCKED: ...] line. A file a person
// filled far past its limit (more than twice it, and more than 4,000 code
// points) is shown cut in the middle, with a line saying how much was left
// out. No entries render as "".
func RenderMemoryBlock(t Target, entries []string, limit int) string {
	if len(entries) == 0 {
		return ""
	}
	chars := CharCount(entries)
	content := string(FormatEntries(displayEntries(entries, t.File())))
	if renderCap := max(2*limit, 4000); utf8.RuneCountInString(content) > renderCap {
		r := []rune(content)
		head, tail := renderCap*7/10, renderCap*2/10
		omitted := len(r) - head - tail
		content = string(r[:head]) +
			fmt.Sprintf("\n\n[... %s chars left out: %s is over its limit (%s/%s); consolidate it with memory replace/remove ...]\n\n", groupThousands(omitted), t.File(), groupThousands(chars), groupThousands(limit)) +
			string(r[len(r)-tail:])
	}
	over := ""
	if chars > limit {
		over = " ⚠ OVER BUDGET"
	}
	title := titleMemory
	if t == TargetUser {
		title = titleUser
	}
	header := fmt.Sprintf("%s [%s%s]", title, FormatUsage(chars, limit), over)
	return blockRule + "\n" + header + "\n" + blockRule + "\n" + content
}

// EntryID is a short, stable name for an entry: the first 8 hex digits of
// the SHA-256 of its text. A blocked entry can be removed by "#ID".
func EntryID(entry string) string {
	sum := sha256.Sum256([]byte(entry))
	return hex.EncodeToString(sum[:4])
}

// blockedLine returns the line that stands in for an entry failing the
// security scan, or "" if the entry passes.
func blockedLine(entry, file string) string {
	rule := scan.RuleOf(entry)
	if rule == "" {
		return ""
	}
	id := EntryID(entry)
	return fmt.Sprintf("[BLOCKED: %s — entry #%s of %s failed the security scan and is left out; remove it with old_text \"#%s\"]", rule, id, file, id)
}

// displayEntry returns entry, or its BLOCKED line if it fails the scan.
func displayEntry(entry, file string) string {
	if line := blockedLine(entry, file); line != "" {
		return line
	}
	return entry
}

// displayEntries maps displayEntry over entries.
func displayEntries(entries []string, file string) []string {
	if len(entries) == 0 {
		return nil
	}
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = displayEntry(e, file)
	}
	return out
}

// Sections of the prompt render ('nexus prompt', the MCP prompt
// session_start), by the name --only/--without and the --json fields use.
const (
	SectionIdentity    = "identity"     // IDENTITY.md without frontmatter
	SectionMemory      = "memory"       // the MEMORY.md block
	SectionUser        = "user"         // the USER.md block
	SectionMemoryIndex = "memory_index" // the memory index of fact files
	SectionUnread      = "unread"       // unread live-log entries
	SectionCheckpoint  = "checkpoint"   // the latest checkpoint
	SectionDecisions   = "decisions"    // current decisions
)

// Bounds of the log sections of the prompt render.
const (
	// DefaultUnreadChars bounds the unread section, in code points, when
	// [PromptOptions.MaxChars] is 0: about a thousand tokens.
	DefaultUnreadChars = 4000
	// promptBodyRunes bounds how much of an entry's body is shown.
	promptBodyRunes = 300
	// promptDecisions is how many current decisions are shown (the newest).
	promptDecisions = 30
)

// promptSection is one section of the prompt render: its name and how to
// render it ("" when there is nothing to show).
type promptSection struct {
	name   string
	render func(r *promptRun) (string, error)
}

// promptSections lists every section in render order.
var promptSections = []promptSection{
	{SectionIdentity, (*promptRun).identity},
	{SectionMemory, func(r *promptRun) (string, error) { return r.memory(TargetMemory) }},
	{SectionUser, func(r *promptRun) (string, error) { return r.memory(TargetUser) }},
	{SectionCurator, (*promptRun).curator},
	{SectionMemoryIndex, (*promptRun).index},
	{SectionUnread, (*promptRun).unread},
	{SectionCheckpoint, (*promptRun).checkpoint},
	{SectionDecisions, (*promptRun).decisions},
}

// SectionNames returns the names of every section, in render order.
func SectionNames() []string {
	names := make([]string, len(promptSections))
	for i, s := range promptSections {
		names[i] = s.name
	}
	return names
}

// SnapshotSections returns the sections of [RenderSnapshot]: identity,
// MEMORY, USER and the memory index.
func SnapshotSections() []string {
	return []string{SectionIdentity, SectionMemory, SectionUser, SectionCurator, SectionMemoryIndex}
}

// PromptOptions choose what [RenderPrompt] renders.
type PromptOptions struct {
	// Only renders just these sections; empty means every section.
	Only []string
	// Without leaves these sections out.
	Without []string
	// MaxEntries bounds how many unread entries are shown; 0 means the
	// vault's prompt_log_entries setting.
	MaxEntries int
	// MaxChars bounds the unread section's length in code points (at least
	// one entry is always shown); 0 means [DefaultUnreadChars].
	MaxChars int
	// Ack shows the oldest unread entries (instead of the newest) and then
	// acknowledges exactly the entries shown: the ones left out stay unread
	// and come first next time.
	Ack bool
}

// PromptSection is one rendered section. Text is "" when the section has
// nothing to show (an empty MEMORY.md, say).
type PromptSection struct {
	Name string
	Text string
}

// Prompt is a prompt render, section by section.
type Prompt struct {
	Agent    string
	Sections []PromptSection // the sections asked for, in render order
	// Unread is filled in when the unread section was rendered.
	Unread *UnreadShown
}

// UnreadShown says which unread entries the unread section shows.
type UnreadShown struct {
	Total   int             // entries unread for the agent when it was read
	Entries []livelog.Entry // the entries shown, oldest first
	Acked   bool            // the entries shown were acknowledged
}

// More is how many unread entries were left out.
func (u *UnreadShown) More() int { return u.Total - len(u.Entries) }

// Section returns the text of the named section and whether it was
// rendered.
func (p *Prompt) Section(name string) (string, bool) {
	for _, s := range p.Sections {
		if s.Name == name {
			return s.Text, true
		}
	}
	return "", false
}

// Text joins the sections that have something to show, a blank line
// between them, ending in a newline ("" when none has).
func (p *Prompt) Text() string {
	var parts []string
	for _, s := range p.Sections {
		if t := strings.TrimRight(s.Text, "\n"); t != "" {
			parts = append(parts, t)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "\n\n") + "\n"
}

// RenderPrompt renders the sections opts asks for, for agent. It reads only,
// unless opts.Ack: then it acknowledges the unread entries it shows, and no
// others. An unknown agent is an error whatever the sections.
func RenderPrompt(v *vault.Vault, agent string, opts PromptOptions) (*Prompt, error) {
	want, err := chooseSections(opts.Only, opts.Without)
	if err != nil {
		return nil, err
	}
	r := &promptRun{v: v, agent: agent, opts: opts}
	if err := r.loadIdentity(); err != nil {
		return nil, err
	}
	p := &Prompt{Agent: agent}
	for _, s := range promptSections {
		if !want[s.name] {
			continue
		}
		text, err := s.render(r)
		if err != nil {
			return nil, err
		}
		p.Sections = append(p.Sections, PromptSection{Name: s.name, Text: strings.TrimRight(printable(text), "\n")})
	}
	p.Unread = r.shown
	return p, nil
}

// printable returns s without the control characters a file can bring into
// a prompt ([scan.Printable]). Every section of [RenderPrompt] passes
// through it.
func printable(s string) string { return scan.Printable(s) }

// chooseSections returns the set of sections only and without leave.
func chooseSections(only, without []string) (map[string]bool, error) {
	known := map[string]bool{}
	for _, s := range promptSections {
		known[s.name] = true
	}
	check := func(names []string) error {
		for _, n := range names {
			if !known[n] {
				return fmt.Errorf("%w: %q (the sections are %s)", ErrSection, n, strings.Join(SectionNames(), ", "))
			}
		}
		return nil
	}
	if err := check(only); err != nil {
		return nil, err
	}
	if err := check(without); err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for n := range known {
		want[n] = len(only) == 0
	}
	for _, n := range only {
		want[n] = true
	}
	for _, n := range without {
		want[n] = false
	}
	return want, nil
}

// promptRun is one [RenderPrompt] call in progress.
type promptRun struct {
	v     *vault.Vault
	agent string
	opts  PromptOptions
	id    *identity.Identity
	log   *livelog.Log
	shown *UnreadShown
}

// loadIdentity loads the agent's identity; it fails for an unknown agent.
func (r *promptRun) loadIdentity() error {
	id, err := identity.Load(r.v, r.agent)
	if err != nil && (id == nil || !(errors.Is(err, identity.ErrKey) || errors.Is(err, identity.ErrMalformed))) {
		return err
	}
	if err != nil && errors.Is(err, identity.ErrMalformed) {
		// A person's typo in the frontmatter must not take the agent
		// offline: show the file as it is, with what to fix.
		copied := *id
		copied.Body = "(" + err.Error() + " — fix the frontmatter between the --- lines)\n\n" + id.Body
		id = &copied
	}
	r.id = id
	return nil
}

func (r *promptRun) openLog() (*livelog.Log, error) {
	if r.log == nil {
		l, err := livelog.Open(r.v, livelog.Options{})
		if err != nil {
			return nil, err
		}
		r.log = l
	}
	return r.log, nil
}

func (r *promptRun) identity() (string, error) { return RenderIdentityBlock(r.id), nil }

func (r *promptRun) memory(t Target) (string, error) {
	m, err := OpenMemory(r.v, r.agent, t)
	if err != nil {
		return "", err
	}
	entries, err := m.Entries()
	if err != nil {
		return "", err
	}
	return RenderMemoryBlock(t, entries, m.Limit()), nil
}

func (r *promptRun) index() (string, error) {
	// The index is derived from the fact files; a problem keeping it in
	// step (a read-only vault, say) must not cost the agent its memory.
	idx, err := RenderIndex(r.v, r.agent)
	if err != nil {
		idx = fmt.Sprintf("%s\n%s\n%s\n(the memory index could not be read: %v)", blockRule, IndexBanner, blockRule, err)
	}
	return idx, nil
}

// unread renders the agent's unread entries, at most MaxEntries of them in
// at most MaxChars code points, with a line saying how many were left out:
// the newest ones, or with Ack the oldest ones, which it then acknowledges.
func (r *promptRun) unread() (string, error) {
	l, err := r.openLog()
	if err != nil {
		return "", err
	}
	maxEntries := r.opts.MaxEntries
	if maxEntries <= 0 {
		maxEntries = r.v.Config().PromptLogEntries
	}
	// Only the entries that can be shown are kept: an agent that never
	// acknowledged a big log has all of it unread.
	all, total, err := l.UnreadEnd(r.agent, maxEntries, r.opts.Ack)
	// One feed that cannot be read must not cost the agent the others:
	// show them, and name what was left out.
	var unreadable *livelog.UnreadableError
	if err != nil && !errors.As(err, &unreadable) {
		return "", fmt.Errorf("read the unread log entries: %w", err)
	}
	budget := r.opts.MaxChars
	if budget <= 0 {
		budget = DefaultUnreadChars
	}
	// Pick entries from the chosen end while they fit.
	var lines []string
	used, n := 0, 0
	for n < len(all) && n < maxEntries {
		i := n
		if !r.opts.Ack {
			i = len(all) - 1 - n
		}
		line := PromptEntry(&all[i])
		size := utf8.RuneCountInString(line)
		if n > 0 && used+size > budget {
			break
		}
		used += size
		lines = append(lines, line)
		n++
	}
	shown := &UnreadShown{Total: total}
	if r.opts.Ack {
		shown.Entries = all[:n]
	} else {
		shown.Entries = all[len(all)-n:]
		slices.Reverse(lines)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Unread log entries (%d)\n", total)
	if unreadable != nil {
		fmt.Fprintf(&b, "(left out, could not be read: %s — %s)\n", oneLine(strings.Join(unreadable.Files, ", ")), oneLine(unreadable.Errs[0].Error()))
	}
	switch more := shown.More(); {
	case total == 0:
		b.WriteString("Nothing new in the live log.\n")
	case more > 0 && r.opts.Ack:
		fmt.Fprintf(&b, "(%d newer unread %s not shown yet; they stay unread and come next time; log_read shows them now.)\n", more, entriesWord(more))
	case more > 0:
		fmt.Fprintf(&b, "(%d older unread %s not shown; call log_read to see them all.)\n", more, entriesWord(more))
	}
	for _, line := range lines {
		b.WriteString(line)
	}
	if r.opts.Ack && n > 0 {
		if err := l.Ack(r.agent, shown.Entries[n-1]); err != nil {
			return "", fmt.Errorf("acknowledge the entries shown: %w", err)
		}
		shown.Acked = true
	}
	r.shown = shown
	return b.String(), nil
}

// PromptEntry renders one log entry as the prompt shows it ([livelog.PromptEntry]:
// one renderer, so a quarantined entry reads the same in every prompt).
func PromptEntry(e *livelog.Entry) string { return livelog.PromptEntry(e) }

func (r *promptRun) checkpoint() (string, error) {
	var b strings.Builder
	b.WriteString("## Latest checkpoint\n")
	cp, err := livelog.LoadCheckpoint(r.v, r.agent)
	switch {
	case errors.Is(err, livelog.ErrNoCheckpoint):
		b.WriteString("No checkpoint saved.\n")
	case err != nil:
		fmt.Fprintf(&b, "(checkpoint unreadable: %v)\n", err)
	default:
		m := cp.Masked() // a quarantined checkpoint shows its notice only
		cp = &m
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
			fmt.Fprintf(&b, "- Notes: %s\n", clipRunes(oneLine(cp.Notes), promptBodyRunes))
		}
	}
	return b.String(), nil
}

func (r *promptRun) decisions() (string, error) {
	l, err := r.openLog()
	if err != nil {
		return "", err
	}
	ds, err := l.ListDecisions(false)
	if err != nil {
		return "", fmt.Errorf("list the decisions: %w", err)
	}
	var b strings.Builder
	b.WriteString("## Current decisions\n")
	if len(ds) == 0 {
		b.WriteString("No decisions recorded.\n")
	}
	if more := len(ds) - promptDecisions; more > 0 {
		fmt.Fprintf(&b, "(%d older decisions not shown; decision_list shows them all.)\n", more)
		ds = ds[more:]
	}
	for _, d := range ds {
		if d.Quarantine != "" {
			fmt.Fprintf(&b, "- %s [QUARANTINED: %s] (see %s, nexus decisions --raw) — %s, %s\n", d.ID, d.Quarantine, d.File, d.Agent, d.Time.Format("2006-01-02"))
			continue
		}
		if len(d.Conflict) > 0 {
			fmt.Fprintf(&b, "- CONFLICT: %s and %s supersede the same decision; ask a person which holds\n", d.ID, strings.Join(d.Conflict, ", "))
		}
		fmt.Fprintf(&b, "- %s %s: %s", d.ID, oneLine(d.Title), clipRunes(oneLine(d.Decision), promptBodyRunes))
		if d.Supersedes != "" {
			fmt.Fprintf(&b, " (supersedes %s)", d.Supersedes)
		}
		fmt.Fprintf(&b, " — %s, %s\n", d.Agent, d.Time.Format("2006-01-02"))
	}
	return b.String(), nil
}

// entriesWord is "entry" or "entries", to go after n.
func entriesWord(n int) string {
	if n == 1 {
		return "entry"
	}
	return "entries"
}

// clipRunes cuts s to n code points, the last one an ellipsis.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
