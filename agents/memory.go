package agents

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

// Target names one of an agent's two bounded-memory files.
type Target string

// The bounded-memory targets (SPEC §2).
const (
	TargetMemory Target = "memory" // agents/NAME/MEMORY.md: the agent's own notes
	TargetUser   Target = "user"   // agents/NAME/USER.md: what it knows about the user
)

// ParseTarget turns "memory" or "user" into a Target; "" means memory.
func ParseTarget(s string) (Target, error) {
	switch Target(s) {
	case "", TargetMemory:
		return TargetMemory, nil
	case TargetUser:
		return TargetUser, nil
	}
	return "", fmt.Errorf("target %q: %w", s, ErrBadTarget)
}

// File returns the target's file name in the agent's home.
func (t Target) File() string {
	if t == TargetUser {
		return UserFile
	}
	return MemoryFile
}

// Memory actions.
const (
	ActionAdd     = "add"
	ActionReplace = "replace"
	ActionRemove  = "remove"
)

// Op is one bounded-memory operation, as the Hermes memory tool takes it.
type Op struct {
	// Action is "add", "replace" or "remove".
	Action string `json:"action"`
	// Content is the entry to add, or the replacement text.
	Content string `json:"content,omitempty"`
	// OldText names the entry to replace or remove: a case-sensitive
	// substring that must match exactly one distinct entry.
	OldText string `json:"old_text,omitempty"`
}

// Result is the outcome of a memory operation. The JSON field names are
// those of the Hermes memory tool; CLI --json and the MCP tool print it.
type Result struct {
	Success bool   `json:"success"`
	Message string `json:"message,omitempty"`
	Target  string `json:"target"`
	// Usage is "67% — 1,474/2,200 chars", after the operation on success
	// and as the file stands on failure.
	Usage      string `json:"usage"`
	EntryCount int    `json:"entry_count"`
	// Chars and Limit are the numbers behind Usage.
	Chars int `json:"chars"`
	Limit int `json:"limit"`
	// Error says why the operation was refused and what to do instead.
	Error string `json:"error,omitempty"`
	// CurrentEntries are the entries as they stand, given on failure so the
	// agent can consolidate in the same turn. An entry that fails the
	// security scan is shown by its [BLOCKED: ...] line.
	CurrentEntries []string `json:"current_entries,omitempty"`
	// Matches are previews of the entries an ambiguous old_text matched.
	Matches []string `json:"matches,omitempty"`
	// Entries are the entries (BLOCKED lines for those failing the scan),
	// filled by [Memory.Show].
	Entries []string `json:"entries,omitempty"`
	// Backup is the vault-relative path of the copy made of a file that
	// would not survive a rewrite unchanged.
	Backup string `json:"backup,omitempty"`
	// Staged and PendingID report a write that waits in review instead of
	// landing (review gate, SPEC §7).
	Staged    bool   `json:"staged,omitempty"`
	PendingID string `json:"pending_id,omitempty"`
	// CuratorNotice names a curator proposal waiting for a person when the
	// file is past the curator's pressure threshold ([CuratorNotice]).
	CuratorNotice string `json:"curator_notice,omitempty"`
}

// MemoryOption configures a [Memory].
type MemoryOption func(*Memory)

// WithClock sets the clock used to name backups (default time.Now).
func WithClock(now func() time.Time) MemoryOption { return func(m *Memory) { m.now = now } }

// WithLogger sets where the store logs backups and retries (default: nowhere).
func WithLogger(l *slog.Logger) MemoryOption { return func(m *Memory) { m.log = l } }

// Memory is one bounded-memory file of one agent: MEMORY.md or USER.md.
//
// It holds no entries itself: every call reads the file. Writes take the
// file's cross-process lock, re-read the file under it, and replace it
// atomically with a compare-and-swap, so concurrent writers in any number of
// processes, and a person saving in an editor, never lose each other's
// entries. A Memory is safe for concurrent use.
type Memory struct {
	v      *vault.Vault
	agent  string
	target Target
	limit  int
	rel    string // vault-relative path of the file
	path   string // absolute path of the file
	now    func() time.Time
	log    *slog.Logger
}

// maxCASAttempts bounds how often a write starts over because a person (or
// a process not taking the lock) saved the file in between.
const maxCASAttempts = vault.CASAttempts

// testHookBeforeReplace, when set by a test, runs just before the
// compare-and-swap, to simulate a person saving the file at that moment.
var testHookBeforeReplace func(path string)

// OpenMemory opens an agent's MEMORY.md (TargetMemory) or USER.md
// (TargetUser). The agent must exist; the file need not. The limit comes
// from the vault's config (memory_char_limit, user_char_limit).
func OpenMemory(v *vault.Vault, agent string, t Target, opts ...MemoryOption) (*Memory, error) {
	if err := identity.ValidName(agent); err != nil {
		return nil, err
	}
	if t != TargetMemory && t != TargetUser {
		return nil, fmt.Errorf("target %q: %w", t, ErrBadTarget)
	}
	if _, err := identity.Load(v, agent); err != nil && (errors.Is(err, vault.ErrNotFound) || errors.Is(err, vault.ErrInvalid)) {
		return nil, err
	}
	rel := HomePath(agent, t.File())
	path, err := v.Path(rel)
	if err != nil {
		return nil, err
	}
	limit := v.Config().MemoryCharLimit
	if t == TargetUser {
		limit = v.Config().UserCharLimit
	}
	m := &Memory{v: v, agent: agent, target: t, limit: limit, rel: rel, path: path, now: time.Now, log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

// Agent returns the agent whose memory this is.
func (m *Memory) Agent() string { return m.agent }

// Target returns which file this is.
func (m *Memory) Target() Target { return m.target }

// Limit returns the file's limit in code points.
func (m *Memory) Limit() int { return m.limit }

// Vault returns the vault the file is in.
func (m *Memory) Vault() *vault.Vault { return m.v }

// Path returns the file's vault-relative path.
func (m *Memory) Path() string { return m.rel }

// read returns the file's bytes, or nil if it does not exist.
func (m *Memory) read() ([]byte, error) {
	data, err := vault.ReadStable(m.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", m.rel, err)
	}
	return data, nil
}

// Entries returns the file's entries, identical ones once, as they are on
// disk (including any that fail the security scan).
func (m *Memory) Entries() ([]string, error) {
	raw, err := m.read()
	if err != nil {
		return nil, err
	}
	return dedupeEntries(parseEntriesMerged(raw)), nil
}

// Show returns the file's usage and its entries, each entry that fails the
// security scan replaced by its [BLOCKED: ...] line.
func (m *Memory) Show() (Result, error) {
	entries, err := m.Entries()
	if err != nil {
		return Result{Success: false, Target: string(m.target), Error: err.Error()}, err
	}
	r := m.result(entries, "")
	r.Entries = displayEntries(entries, m.target.File())
	return r, nil
}

// Apply applies ops to the file, all or nothing, and returns the result.
//
// Every add and replace is trimmed, validated and security-scanned before
// the file is touched. Under the file's lock the current entries are read,
// the operations applied in order to a copy, and the limit checked on the
// outcome; then the file is replaced atomically. Adding an entry that
// already exists succeeds and changes nothing. A file holding a person's
// edits that would not survive the rewrite unchanged is first copied beside
// itself (see Result.Backup).
//
// A refusal (limit, scan hit, no or ambiguous match) returns a Result with
// Success false and an error matching [vault.ErrRefused]; bad input (empty
// or invalid text, unknown action) an error matching [vault.ErrInvalid]. In
// both cases nothing was written.
func (m *Memory) Apply(ops ...Op) (Result, error) { return m.run(ops, true) }

// Check validates ops exactly as [Memory.Apply] does — input, security
// scan, matches and the limit against the file as it is now — and writes
// nothing. A write that waits in review is checked with it first.
func (m *Memory) Check(ops ...Op) (Result, error) { return m.run(ops, false) }

func (m *Memory) run(ops []Op, write bool) (Result, error) {
	ops, err := m.prepare(ops)
	if err != nil {
		return m.failNow(err), err
	}
	if !write {
		raw, err := m.read()
		if err != nil {
			return m.fail(nil, err), err
		}
		p, err := m.plan(raw, ops)
		if err != nil {
			return m.fail(p, err), err
		}
		return m.result(p.after, "Check passed; nothing was written. Applied, it would say: "+p.message(len(ops))), nil
	}
	if err := vault.MkdirAll(filepath.Dir(m.path), 0o755); err != nil {
		err = fmt.Errorf("create %s: %w", filepath.ToSlash(filepath.Dir(m.rel)), err)
		return m.failNow(err), err
	}
	unlock, err := m.v.Lock(m.rel)
	if err != nil {
		return m.failNow(err), err
	}
	defer unlock()
	unlockHermes, err := m.hermesLock()
	if err != nil {
		return m.failNow(err), err
	}
	defer unlockHermes()
	var (
		backup   string // vault-relative path of the last backup made
		backedUp []byte // the bytes saved in it
	)
	for attempt := 1; ; attempt++ {
		raw, err := m.read()
		if err != nil {
			return m.fail(nil, err), err
		}
		p, err := m.plan(raw, ops)
		if err != nil {
			return m.fail(p, err), err
		}
		if !p.changed {
			return m.result(p.after, p.message(len(ops))), nil
		}
		if p.drift && (backedUp == nil || !bytes.Equal(backedUp, raw)) {
			if backup, err = m.backup(raw); err != nil {
				return m.fail(p, err), err
			}
			backedUp = raw
		}
		if testHookBeforeReplace != nil {
			testHookBeforeReplace(m.path)
		}
		err = vault.ReplaceIf(m.path, raw, FormatEntries(p.after), 0o644)
		if errors.Is(err, vault.ErrConflict) && attempt < maxCASAttempts {
			m.log.Info("memory file changed while writing; starting over", "file", m.rel, "attempt", attempt)
			continue
		}
		if !vault.Written(err) {
			err = fmt.Errorf("write %s: %w", m.rel, err)
			return m.fail(p, err), err
		}
		if err != nil {
			// Written: a retry would add the entries twice.
			m.log.Warn("memory file written; its folder's fsync failed", "file", m.rel, "err", err)
		}
		msg := p.message(len(ops))
		if backup != "" {
			msg += " The file held edits that a rewrite would not keep byte for byte; its previous content is saved in " + backup + "."
		}
		r := m.result(p.after, msg)
		r.Backup = backup
		return r, nil
	}
}

// hermesLock takes Hermes Agent's own lock on the file — an flock on
// MEMORY.md.lock beside it — when that lock file exists, that is when a
// Hermes profile keeps its memories in this agent's home. Then a Hermes
// process and Nexus wait for each other instead of racing. Nexus never
// creates the file, so homes Hermes does not use get no stray file.
func (m *Memory) hermesLock() (unlock func(), err error) {
	path := m.path + ".lock"
	if st, err := vault.Stat(path); err != nil || !st.Mode().IsRegular() {
		return func() {}, nil
	}
	// Bounded like Nexus's own locks; Nexus never writes into it.
	return m.v.LockFile(path, "Hermes Agent's "+m.rel+".lock")
}

// maxTextBytes bounds content and old_text: far above any sensible limit,
// low enough that a runaway caller gets a clear error, not a scan of
// megabytes.
func (m *Memory) maxTextBytes() int { return max(64<<10, 4*m.limit) }

// prepare validates, trims and scans ops.
func (m *Memory) prepare(ops []Op) ([]Op, error) {
	if len(ops) == 0 {
		return nil, invalid("no memory operation given")
	}
	out := make([]Op, len(ops))
	for i, op := range ops {
		pos := opPrefix(i, len(ops), op.Action)
		// Entries are read back with LF line ends; store them so.
		op.Content = strings.TrimSpace(normalizeNewlines(op.Content))
		op.OldText = strings.TrimSpace(normalizeNewlines(op.OldText))
		switch op.Action {
		case ActionAdd, ActionReplace:
			if err := m.checkText("content", op.Content); err != nil {
				if op.Action == ActionReplace && op.Content == "" {
					return nil, invalid(pos + "content is empty; to delete an entry use remove")
				}
				return nil, invalid(pos + err.Error())
			}
			if strings.Contains(op.Content, "§") {
				for _, line := range strings.Split(op.Content, "\n") {
					if isSeparatorLine(line) {
						return nil, invalid(pos + "content has a line holding only §, which separates entries on disk; put § inside a line or send separate entries")
					}
				}
			}
			if err := ScanText(op.Content); err != nil {
				var se *ScanError
				errors.As(err, &se)
				return nil, &memError{msg: pos + err.Error(), kinds: []error{se}}
			}
		case ActionRemove:
		case "":
			return nil, invalid(pos + "action is empty; use add, replace or remove")
		default:
			return nil, invalid(fmt.Sprintf("%sunknown action %q; use add, replace or remove", pos, op.Action))
		}
		if op.Action != ActionAdd {
			if err := m.checkText("old_text", op.OldText); err != nil {
				return nil, invalid(pos + err.Error() + "; name the entry by a short substring of it")
			}
		}
		out[i] = op
	}
	return out, nil
}

// checkText applies vault.CheckText and returns its message without the
// sentinel suffix.
func (m *Memory) checkText(field, s string) error {
	if err := vault.CheckText(field, s, m.maxTextBytes()); err != nil {
		return errors.New(strings.TrimSuffix(err.Error(), ": "+vault.ErrInvalid.Error()))
	}
	return nil
}

// opPrefix names an operation inside a batch in error messages.
func opPrefix(i, n int, action string) string {
	if n == 1 {
		return ""
	}
	if action == "" {
		action = "?"
	}
	return fmt.Sprintf("operation %d (%s): ", i+1, action)
}

// memPlan is what a batch does to the file's entries.
type memPlan struct {
	before  []string // current entries, identical ones once
	after   []string // entries once the batch is applied
	changed bool     // after differs from before
	drift   bool     // the file would not survive a rewrite unchanged
	skipped int      // adds of entries that already existed
	action  string   // the single op's action, "" for a batch
}

// message is the success message for the plan.
func (p *memPlan) message(n int) string {
	if !p.changed {
		if p.skipped > 0 {
			if n == 1 {
				return "Entry already exists; nothing written."
			}
			return fmt.Sprintf("All %d operations leave the file as it is (%d entries already existed); nothing written.", n, p.skipped)
		}
		return "The file already says that; nothing written."
	}
	switch p.action {
	case ActionAdd:
		return "Entry added."
	case ActionReplace:
		return "Entry replaced."
	case ActionRemove:
		return "Entry removed."
	}
	msg := fmt.Sprintf("Applied %d operations.", n)
	if p.skipped > 0 {
		msg += fmt.Sprintf(" %d added entries already existed and were skipped.", p.skipped)
	}
	return msg
}

// plan applies ops to the entries of raw, in memory, and checks matches and
// the limit. On error the plan still holds the current entries.
func (m *Memory) plan(raw []byte, ops []Op) (*memPlan, error) {
	// A file a sync left with git conflict markers keeps both sides'
	// entries (see Memory.Merge); the markers go, backed up as drift.
	parsed := parseEntriesMerged(raw)
	p := &memPlan{before: dedupeEntries(parsed)}
	if raw != nil {
		// Anything but the canonical bytes (a final newline aside) is a
		// person's layout that the rewrite would change: CRLF line ends, a
		// byte-order mark, blank lines, duplicates. Back it up first.
		p.drift = string(FormatEntries(p.before)) != strings.TrimSuffix(string(raw), "\n")
	}
	if len(ops) == 1 {
		p.action = ops[0].Action
	}
	work := append([]string(nil), p.before...)
	var added int // code points of new text, for the limit message
	for i, op := range ops {
		pos := opPrefix(i, len(ops), op.Action)
		switch op.Action {
		case ActionAdd:
			if slices.Contains(work, op.Content) {
				p.skipped++
				continue
			}
			work = append(work, op.Content)
			added += utf8.RuneCountInString(op.Content)
		case ActionReplace, ActionRemove:
			idx, err := m.match(work, op.OldText, pos, len(ops))
			if err != nil {
				return p, err
			}
			if op.Action == ActionRemove {
				work = append(work[:idx:idx], work[idx+1:]...)
				continue
			}
			work[idx] = op.Content
			work = dedupeEntries(work)
			added += utf8.RuneCountInString(op.Content)
		}
	}
	p.after = work
	p.changed = !slices.Equal(p.before, p.after)
	cur, next := CharCount(p.before), CharCount(p.after)
	// Refuse only growth past the limit: a file a person filled past it can
	// still be consolidated step by step.
	if next > m.limit && next > cur {
		return p, m.limitError(ops, cur, next, added)
	}
	return p, nil
}

// match finds the one entry old names. Identical entries count as one.
// When no entry contains old as is, Unicode-composed (NFC) forms are
// compared, and then an entry that fails the security scan may be named by
// its BLOCKED line or its #id (the agent never sees its text).
func (m *Memory) match(entries []string, old, pos string, n int) (int, error) {
	idx := matchIn(entries, func(e string) bool { return strings.Contains(e, old) })
	if len(idx) == 0 {
		// Text typed on macOS may arrive decomposed (NFD): compare composed.
		nold := norm.NFC.String(old)
		idx = matchIn(entries, func(e string) bool { return strings.Contains(norm.NFC.String(e), nold) })
	}
	if len(idx) == 0 {
		idx = matchIn(entries, func(e string) bool {
			line := blockedLine(e, m.target.File())
			return line != "" && strings.Contains(line, old)
		})
	}
	batch := ""
	if n > 1 {
		batch = " Nothing was applied (a batch is all or nothing)."
	}
	switch {
	case len(idx) == 0:
		return 0, refused(ErrNoMatch, fmt.Sprintf("%sno entry in %s contains %q (old_text is a case-sensitive substring). Check current_entries and retry with text from the entry you mean.%s", pos, m.target.File(), old, batch))
	case len(idx) > 1:
		var b strings.Builder
		var previews []string
		fmt.Fprintf(&b, "%s%q matches %d different entries in %s; retry with a longer old_text that matches only one of them (see matches).%s", pos, old, len(idx), m.target.File(), batch)
		for _, i := range idx {
			previews = append(previews, memPreview(displayEntry(entries[i], m.target.File())))
		}
		return 0, &memError{msg: b.String(), kinds: []error{ErrAmbiguous, vault.ErrRefused}, matches: previews}
	}
	return idx[0], nil
}

// matchIn returns the indexes of the entries f accepts.
func matchIn(entries []string, f func(string) bool) []int {
	var idx []int
	for i, e := range entries {
		if f(e) {
			idx = append(idx, i)
		}
	}
	return idx
}

// limitError explains a refusal for the limit and how to recover.
func (m *Memory) limitError(ops []Op, cur, next, added int) error {
	file := m.target.File()
	var what string
	switch {
	case len(ops) > 1:
		what = fmt.Sprintf("After all %d operations (%s chars of new text) it would be at %s", len(ops), groupThousands(added), groupThousands(next))
	case ops[0].Action == ActionReplace:
		what = fmt.Sprintf("The replacement (%s chars) would bring it to %s", groupThousands(added), groupThousands(next))
	default:
		what = fmt.Sprintf("Adding this entry (%s chars) would bring it to %s", groupThousands(added), groupThousands(next))
	}
	msg := fmt.Sprintf("%s is at %s. %s, over the limit of %s. Nothing was written. "+
		"Consolidate now: use replace to merge overlapping entries into shorter ones, or remove stale ones (see current_entries), then retry — in this same turn; several operations can be sent at once. "+
		"To keep the full detail, save it as a fact (the fact_write tool, or 'nexus fact write') and leave a one-line pointer to it here.",
		file, FormatUsage(cur, m.limit), what, groupThousands(m.limit))
	return refused(ErrOverLimit, msg)
}

// backup copies raw beside the file as NAME.bak-TIME (a new file; never
// overwriting one) and returns its vault-relative path.
func (m *Memory) backup(raw []byte) (string, error) {
	stamp := m.now().UTC().Format("20060102T150405Z")
	for i := 1; i < 100; i++ {
		name := m.rel + ".bak-" + stamp
		if i > 1 {
			name += fmt.Sprintf("-%d", i)
		}
		path, err := m.v.Path(name)
		if err != nil {
			return "", err
		}
		err = vault.ReplaceIf(path, nil, raw, 0o644)
		if errors.Is(err, vault.ErrConflict) {
			continue
		}
		if !vault.Written(err) {
			return "", fmt.Errorf("back up %s: %w", m.rel, err)
		}
		m.log.Info("backed up a memory file that would not survive a rewrite", "file", m.rel, "backup", name)
		return name, nil
	}
	return "", fmt.Errorf("back up %s: too many backups named %s.bak-%s*", m.rel, m.rel, stamp)
}

// result is a success Result for entries.
func (m *Memory) result(entries []string, msg string) Result {
	chars := CharCount(entries)
	return Result{
		Success:    true,
		Message:    msg,
		Target:     string(m.target),
		Usage:      FormatUsage(chars, m.limit),
		EntryCount: len(entries),
		Chars:      chars,
		Limit:      m.limit,
	}
}

// fail is a failure Result showing the current entries of p (or of the
// file, if p is nil).
func (m *Memory) fail(p *memPlan, err error) Result {
	var entries []string
	if p != nil {
		entries = p.before
	} else if e, rerr := m.Entries(); rerr == nil {
		entries = e
	}
	r := m.result(entries, "")
	r.Success = false
	r.Error = err.Error()
	r.CurrentEntries = displayEntries(entries, m.target.File())
	var me *memError
	if errors.As(err, &me) {
		r.Matches = me.matches
	}
	return r
}

// failNow is fail for an error found before the file was read.
func (m *Memory) failNow(err error) Result { return m.fail(nil, err) }

// memPreview shortens an entry to one line of at most 80 code points.
func memPreview(e string) string {
	e = strings.Join(strings.Fields(e), " ")
	if utf8.RuneCountInString(e) <= 80 {
		return e
	}
	r := []rune(e)
	return string(r[:77]) + "..."
}
