package retention

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/internal/scan"
	"github.com/nexus-memory/nexus/person"
	"github.com/nexus-memory/nexus/vault"
)

// Filter narrows a listing. The zero Filter lists everything.
type Filter struct {
	Agent string
}

// List returns the pending items, oldest first (by proposal time, then id).
// A file in review/pending/ that cannot be parsed is listed with Status
// "invalid" and the reason in Error, so a person sees it.
func List(v *vault.Vault, f Filter) ([]Item, error) {
	dir := v.MustPath(vault.PendingDir)
	des, err := vault.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", vault.PendingDir, err)
	}
	items := make([]Item, 0, len(des))
	for _, de := range des {
		name := de.Name()
		// Regular files only (no symlinks), so the joined path stays in
		// the vault without resolving each one.
		if !de.Type().IsRegular() || !strings.HasSuffix(name, ".md") || strings.HasPrefix(name, ".") || vault.IsConflictCopy(name) {
			continue
		}
		id := strings.TrimSuffix(name, ".md")
		data, err := vault.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // decided meanwhile
		}
		it, perr := ParseItem(id, data)
		it.Path = PendingPath(id)
		if err != nil || perr != nil {
			if err == nil {
				err = perr
			}
			it = Item{ID: id, Status: "invalid", Error: err.Error(), Path: PendingPath(id)}
		}
		if f.Agent != "" && it.Agent != f.Agent {
			continue
		}
		items = append(items, it)
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i].Provenance.Time, items[j].Provenance.Time
		if !a.Equal(b) {
			return a.Before(b)
		}
		return items[i].ID < items[j].ID
	})
	return items, nil
}

// PendingSummary is how many items wait for one agent and since when.
type PendingSummary struct {
	Count  int       `json:"count"`
	Oldest time.Time `json:"oldest"`
}

// Pending counts the pending items per agent.
func Pending(v *vault.Vault) (map[string]PendingSummary, error) {
	items, err := List(v, Filter{})
	if err != nil {
		return nil, err
	}
	out := map[string]PendingSummary{}
	for _, it := range items {
		s := out[it.Agent]
		s.Count++
		if s.Oldest.IsZero() || it.Provenance.Time.Before(s.Oldest) {
			s.Oldest = it.Provenance.Time
		}
		out[it.Agent] = s
	}
	return out, nil
}

// Get reads one item: pending, or else archived.
func Get(v *vault.Vault, id string) (Item, error) {
	if err := CheckID(id); err != nil {
		return Item{}, err
	}
	it, err := readItem(v, PendingPath(id))
	if errors.Is(err, ErrNoItem) {
		it, err = readItem(v, ArchivePath(id))
	}
	return it, err
}

func readItem(v *vault.Vault, rel string) (Item, error) {
	it, _, err := readItemBytes(v, rel)
	return it, err
}

func readItemBytes(v *vault.Vault, rel string) (Item, []byte, error) {
	id := strings.TrimSuffix(rel[strings.LastIndex(rel, "/")+1:], ".md")
	p, err := v.Path(rel)
	if err != nil {
		return Item{}, nil, fmt.Errorf("review item %q: %w", id, vault.ErrInvalid)
	}
	data, err := vault.ReadStable(p) // a person may be saving it in Obsidian
	if errors.Is(err, fs.ErrNotExist) {
		return Item{}, nil, fmt.Errorf("%s: %w", id, ErrNoItem)
	}
	if err != nil {
		return Item{}, nil, fmt.Errorf("read review item %s: %w", id, err)
	}
	it, err := ParseItem(id, data)
	it.Path = rel
	return it, data, err
}

// Decision is a person's decision on an item.
type Decision struct {
	// By names who decided (a person, or "obsidian" for a status edit).
	By string
	// Why is the reason, recorded in the archive.
	Why string
	// Text, when not nil, replaces the proposed fact body (or the entry's
	// content) before approval: an approve with edits.
	Text *string
	Now  time.Time
	// Signer, when set, signs the decision with a person's unlocked
	// review key. With review.require_person_key on, a decision without a
	// valid signature by a key this machine trusts is refused, wrapping
	// [ErrUnsigned].
	Signer *person.Key
	// Signature is a signature made already (by an interrupted run, kept
	// in its intent); it is checked like a new one.
	Signature *person.Signature
}

// Approve applies a pending item through the same code path as a direct
// write ([agents.WriteFact], or [agents.Memory.Apply] for a memory write),
// so limits and scans still hold, then moves it to review/archive/ with
// status approved, decided_by, decided_at, why and result. If the apply
// fails, the item stays in review/pending/ with status pending and the
// reason in its error property, and the error wraps [ErrApply].
//
// Approve is for a person's decision; it must not be exposed to agents.
func Approve(v *vault.Vault, id string, d Decision) (Item, error) {
	unlock, err := v.Lock(ReviewLock)
	if err != nil {
		return Item{}, err
	}
	defer unlock()
	if _, err := recoverLocked(v); err != nil {
		return Item{}, err
	}
	return decide(v, id, d, true, true)
}

// Reject moves a pending item to review/archive/ with status rejected and
// the reason.
func Reject(v *vault.Vault, id string, d Decision) (Item, error) {
	unlock, err := v.Lock(ReviewLock)
	if err != nil {
		return Item{}, err
	}
	defer unlock()
	if _, err := recoverLocked(v); err != nil {
		return Item{}, err
	}
	return decide(v, id, d, false, true)
}

// decide carries out one decision; the review lock is held. With
// journal, an intent is recorded first and removed when every step is
// done, so a process killed half way is finished by [Recover] (which
// calls decide without journal: its intent is already there).
func decide(v *vault.Vault, id string, d Decision, approve, journal bool) (it Item, err error) {
	if err := CheckID(id); err != nil {
		return Item{}, err
	}
	if strings.TrimSpace(d.By) == "" {
		return Item{}, fmt.Errorf("a decision needs who decided: %w", vault.ErrInvalid)
	}
	if d.Now.IsZero() {
		d.Now = time.Now()
	}
	d.Now = d.Now.UTC().Truncate(time.Second)
	d.Why = strings.Join(strings.Fields(d.Why), " ")
	it, old, err := readItemBytes(v, PendingPath(id))
	if err != nil {
		return it, err
	}
	if d.Text != nil {
		if err := applyEdit(&it, *d.Text); err != nil {
			return it, err
		}
	}
	// Checked before anything is written: an unsigned decision leaves the
	// item exactly as it was.
	sig, err := signDecision(v, it.Statement(approve, d.Now), d)
	if err != nil {
		return it, err
	}
	if journal {
		op := IntentReject
		if approve {
			op = IntentApprove
		}
		in, err := beginIntent(v, Intent{Op: op, ID: id, By: d.By, Why: d.Why, Text: d.Text, Now: d.Now, Signature: sig})
		if err != nil {
			return it, err
		}
		defer func() {
			if err == nil || errors.Is(err, ErrApply) {
				if derr := in.done(v); derr != nil && err == nil {
					err = derr
				}
			}
		}()
	}
	status := StatusRejected
	if approve {
		status = StatusApproved
		if landed(v, it) {
			// Applied already by this item (a process killed before it
			// archived the item): finish instead of applying twice.
			it.Result = resultPath(v, it)
		} else {
			result, aerr := apply(v, it, d.Now)
			if aerr != nil {
				return it, recordFailure(v, it, old, aerr)
			}
			it.Result = result
		}
		if testHookApplied != nil {
			testHookApplied()
		}
	}
	it.Status, it.DecidedBy, it.DecidedAt, it.Why, it.Error = status, d.By, d.Now, d.Why, ""
	if sig != nil {
		it.SignedBy, it.Signature = sig.By, sig.Encode()
	}
	data, err := archivedBytes(old, it, d.Text != nil)
	if err != nil {
		return it, err
	}
	if err := archive(v, it.ID, data); err != nil {
		return it, err
	}
	it.Path = ArchivePath(it.ID)
	return it, nil
}

// testHookApplied runs after an approval is applied, before the item is
// archived; tests kill the process there.
var testHookApplied func()

// resultPath is what an applied item wrote: its fact file or memory file.
func resultPath(v *vault.Vault, it Item) string {
	if h, ok := handlerFor(it.Kind); ok {
		if r, ok := h.Landed(v, it); ok {
			return r
		}
	}
	if it.Kind == KindMemory {
		if t, err := agents.ParseTarget(it.Target); err == nil {
			return agents.HomePath(it.Agent, t.File())
		}
	}
	if f, err := agents.ReadFact(v, it.Agent, it.Name); err == nil {
		return f.Path
	}
	return it.Target
}

// applyEdit replaces the proposal's text with a person's edit.
func applyEdit(it *Item, text string) error {
	text = strings.TrimSpace(text)
	if err := vault.CheckText("edited text", text, agents.MaxFactBodyBytes); err != nil {
		return err
	}
	// A person's edit is scanned before anything is written (no intent,
	// no "last approval failed" on the item): it is refused like text an
	// agent sent, and the item stays pending as it was.
	if err := scan.In(scan.PlaceReview, text); err != nil {
		return fmt.Errorf("the edited text: %w", err)
	}
	switch {
	case it.Kind == KindFact:
		it.Body = text
	case len(it.Ops) == 1 && it.Ops[0].Action != agents.ActionRemove:
		it.Ops[0].Content = text
		it.Body = text
	default:
		return fmt.Errorf("item %s has no single text to edit (it removes an entry or holds several operations); approve or reject it as it is: %w", it.ID, vault.ErrInvalid)
	}
	return nil
}

// apply performs an approved item and returns what it wrote.
func apply(v *vault.Vault, it Item, now time.Time) (string, error) {
	if h, ok := handlerFor(it.Kind); ok {
		return h.Apply(v, it, now) // a curator proposal, a sync conflict (kinds.go)
	}
	switch it.Kind {
	case KindFact:
		f, err := agents.WriteFact(v, it.Agent, it.FactInput(), now)
		if err != nil {
			return "", err
		}
		return f.Path, nil
	case KindMemory:
		t, err := agents.ParseTarget(it.Target)
		if err != nil {
			return "", err
		}
		m, err := agents.OpenMemory(v, it.Agent, t, agents.WithClock(func() time.Time { return now }))
		if err != nil {
			return "", err
		}
		res, err := m.Apply(it.Ops...)
		if err != nil {
			if res.Error != "" && !strings.Contains(err.Error(), res.Error) {
				return "", fmt.Errorf("%w: %s", err, res.Error)
			}
			return "", err
		}
		return m.Path(), nil
	}
	return "", fmt.Errorf("item %s: unknown kind %q: %w", it.ID, it.Kind, vault.ErrInvalid)
}

// recordFailure keeps a failed approval pending, with the reason, changing
// only the status and error properties of the person's file.
func recordFailure(v *vault.Vault, it Item, old []byte, cause error) error {
	reason := strings.Join(strings.Fields(cause.Error()), " ")
	data, err := vault.SetProperty(old, "status", StatusPending)
	if err == nil {
		data, err = vault.SetProperty(data, "error", reason)
	}
	if err == nil {
		err = vault.ReplaceIf(v.MustPath(it.Path), old, data, 0o644)
	}
	if err != nil && !errors.Is(err, vault.ErrConflict) {
		return fmt.Errorf("%w: %v (and recording that failed: %v)", ErrApply, cause, err)
	}
	return fmt.Errorf("%s: %w: %w", it.ID, ErrApply, cause)
}

// archivedBytes is the person's pending file with the decision properties
// set (other keys and the body keep their bytes), or re-rendered when the
// body was edited or the frontmatter cannot be edited in place.
func archivedBytes(old []byte, it Item, edited bool) ([]byte, error) {
	if edited {
		return it.Render()
	}
	data := removeProperty(old, "error")
	var err error
	for _, kv := range [][2]string{
		{"status", it.Status},
		{"decided_by", it.DecidedBy},
		{"decided_at", fmtTime(it.DecidedAt)},
		{"why", it.Why},
		{"result", it.Result},
		{"signed_by", it.SignedBy},
		{"signature", it.Signature},
	} {
		if kv[1] == "" {
			continue
		}
		if data, err = vault.SetProperty(data, kv[0], kv[1]); err != nil {
			return it.Render()
		}
	}
	return data, nil
}

// removeProperty drops a top-level frontmatter key and its continuation
// lines, keeping every other byte.
func removeProperty(data []byte, key string) []byte {
	fm, body, ok := vault.SplitFrontmatter(data)
	if !ok {
		return data
	}
	lines := bytes.SplitAfter(fm, []byte("\n"))
	var out bytes.Buffer
	head := bytes.IndexByte(data, '\n') + 1 // fm starts after the opening fence
	closing := data[head+len(fm) : len(data)-len(body)]
	out.Write(data[:head])
	for i := 0; i < len(lines); i++ {
		l := string(lines[i])
		if k, _, found := strings.Cut(l, ":"); found && strings.TrimSpace(k) == key && l != "" && l[0] != ' ' && l[0] != '\t' {
			for i+1 < len(lines) && len(lines[i+1]) > 0 && (lines[i+1][0] == ' ' || lines[i+1][0] == '\t') {
				i++
			}
			continue
		}
		out.Write(lines[i])
	}
	out.Write(closing)
	out.Write(body)
	return out.Bytes()
}

// archive writes review/archive/ID.md and removes the pending file.
func archive(v *vault.Vault, id string, data []byte) error {
	dst := v.MustPath(ArchivePath(id))
	if err := vault.MkdirAll(v.MustPath(vault.ArchiveDir), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", vault.ArchiveDir, err)
	}
	if err := vault.ReplaceIf(dst, nil, data, 0o644); err != nil {
		if errors.Is(err, vault.ErrConflict) {
			return fmt.Errorf("%s exists already; the pending copy is left in place: %w", ArchivePath(id), vault.ErrRefused)
		}
		return fmt.Errorf("archive %s: %w", id, err)
	}
	if err := vault.Remove(v.MustPath(PendingPath(id))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove pending %s: %w", id, err)
	}
	return vault.SyncDir(v.MustPath(vault.PendingDir))
}

// stableWait separates the two reads of a file decided in Obsidian.
const stableWait = 20 * time.Millisecond

// testHookStable runs between the two reads; tests change a file there.
var testHookStable func()

// ReconcileResult reports what [Reconcile] carried out.
type ReconcileResult struct {
	Approved []Item `json:"approved"`
	Rejected []Item `json:"rejected"`
	// Failed are approvals that could not be applied; they stay pending
	// with the reason.
	Failed []Item `json:"failed"`
	// Unsigned are decisions set in Obsidian that wait for a person's
	// signature ('nexus review sign'), because review.require_person_key
	// is on. They stay pending, as set.
	Unsigned []Item `json:"unsigned,omitempty"`
}

// Reconcile carries out the decisions a person made in Obsidian by setting
// status: approved or status: rejected in a pending file (with optional
// why: and decided_by:, else "obsidian"). Call it at the start of review
// commands and from the watch and serve loops. It is safe to run from
// several processes at once.
func Reconcile(v *vault.Vault, now time.Time) (ReconcileResult, error) {
	var res ReconcileResult
	if _, err := Recover(v); err != nil {
		return res, err
	}
	dir := v.MustPath(vault.PendingDir)
	des, err := vault.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("list %s: %w", vault.PendingDir, err)
	}
	// A cheap look at each file's status line first: a full parse only for
	// the few a person decided.
	var todo []Item
	var seen [][]byte // the bytes each todo item was parsed from
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() || !strings.HasSuffix(name, ".md") || strings.HasPrefix(name, ".") || vault.IsConflictCopy(name) {
			continue
		}
		data, err := vault.ReadFile(filepath.Join(dir, name))
		if err != nil || !decided(data) {
			continue
		}
		id := strings.TrimSuffix(name, ".md")
		if it, err := ParseItem(id, data); err == nil && (it.Status == StatusApproved || it.Status == StatusRejected) {
			it.Path = PendingPath(id)
			todo = append(todo, it)
			seen = append(seen, data)
		}
	}
	if len(todo) > 0 && RequirePersonKey(v) {
		// Nothing set in a file is a person's signature: each waits for
		// 'nexus review sign'.
		res.Unsigned = todo
		return res, nil
	}
	if len(todo) == 0 {
		return res, nil
	}
	unlock, err := v.Lock(ReviewLock)
	if err != nil {
		return res, err
	}
	defer unlock()
	var errs []error
	// An editor that saves in place (truncate, then write) can be caught
	// half-way: act only on a file that reads the same twice, a moment
	// apart (SPEC §9); an unstable one waits for the next run.
	time.Sleep(stableWait)
	if testHookStable != nil {
		testHookStable()
	}
	for i, it := range todo {
		// Re-read under the lock: another process may have decided it.
		cur, data, err := readItemBytes(v, it.Path)
		if err != nil || cur.Status != it.Status || !bytes.Equal(data, seen[i]) {
			continue
		}
		by := cur.DecidedBy
		if by == "" {
			by = "obsidian"
		}
		done, err := decide(v, cur.ID, Decision{By: by, Why: cur.Why, Now: now}, cur.Status == StatusApproved, true)
		switch {
		case errors.Is(err, ErrApply):
			done.Error = err.Error()
			res.Failed = append(res.Failed, done)
		case err != nil:
			errs = append(errs, err)
		case done.Status == StatusApproved:
			res.Approved = append(res.Approved, done)
		default:
			res.Rejected = append(res.Rejected, done)
		}
	}
	return res, errors.Join(errs...)
}

// decided reports whether a pending file's frontmatter may hold a status
// other than pending (a superset: ParseItem decides).
func decided(data []byte) bool {
	fm, _, ok := vault.SplitFrontmatter(data)
	if !ok {
		return false
	}
	for _, line := range bytes.Split(fm, []byte("\n")) {
		if k, val, found := bytes.Cut(line, []byte(":")); found && string(bytes.TrimSpace(k)) == "status" && len(line) > 0 && line[0] != ' ' {
			s := strings.ToLower(strings.Trim(strings.TrimSpace(string(val)), `"'`))
			return s != StatusPending
		}
	}
	return false
}

// BulkResult reports [ApproveAll].
type BulkResult struct {
	// Snapshot is the id of the snapshot taken before the change.
	Snapshot string `json:"snapshot"`
	Approved []Item `json:"approved"`
	Failed   []Item `json:"failed"`
}

// ApproveAll approves every pending item (of f.Agent, if set), oldest
// first, after taking a snapshot of every file it may change, so that
// [Rollback] can undo it. Items that fail to apply stay pending and are
// reported in Failed.
func ApproveAll(v *vault.Vault, f Filter, d Decision) (BulkResult, error) {
	var res BulkResult
	unlock, err := v.Lock(ReviewLock)
	if err != nil {
		return res, err
	}
	defer unlock()
	if _, err := recoverLocked(v); err != nil {
		return res, err
	}
	if d.Now.IsZero() {
		d.Now = time.Now()
	}
	items, err := List(v, f)
	if err != nil {
		return res, err
	}
	var todo []Item
	for _, it := range items {
		if it.Status != "invalid" {
			todo = append(todo, it)
		}
	}
	if len(todo) == 0 {
		return res, nil
	}
	noun := "items"
	if len(todo) == 1 {
		noun = "item"
	}
	snap, err := TakeSnapshot(v, fmt.Sprintf("before review approve --all (%d %s)", len(todo), noun), affectedPaths(v, todo), d.Now)
	if err != nil {
		return res, err
	}
	res.Snapshot = snap.ID
	for _, it := range todo {
		done, err := decide(v, it.ID, d, true, true)
		if err != nil {
			if errors.Is(err, ErrApply) {
				done.Error = err.Error()
				res.Failed = append(res.Failed, done)
				continue
			}
			return res, err
		}
		// Recorded after each item, so a rollback after a kill half way
		// through still removes the facts made before it.
		if err := snap.AddCreated(v, []string{done.Result}); err != nil {
			return res, err
		}
		res.Approved = append(res.Approved, done)
	}
	return res, nil
}

// affectedPaths lists every file approving items may write: the pending
// and archive files, the proposed fact files, the agents' memory indexes
// and bounded-memory files, and an existing fact an approval would update.
func affectedPaths(v *vault.Vault, items []Item) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, it := range items {
		add(PendingPath(it.ID))
		add(ArchivePath(it.ID))
		switch it.Kind {
		case KindFact:
			add(it.Target)
			if f, err := agents.ReadFact(v, it.Agent, it.Name); err == nil {
				add(f.Path)
			}
			add(agents.HomePath(it.Agent, agents.IndexFile))
		case KindMemory:
			if t, err := agents.ParseTarget(it.Target); err == nil {
				add(agents.HomePath(it.Agent, t.File()))
			}
		default:
			if h, ok := handlerFor(it.Kind); ok {
				for _, p := range h.Affected(it) {
					add(p)
				}
			}
		}
	}
	return out
}
