package livelog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/internal/scan"
	"github.com/nexus-memory/nexus/vault"
)

// Checkpoint limits.
const (
	MaxCheckpointField = 4 << 10  // task, state, next: bytes each
	MaxCheckpointNotes = 64 << 10 // notes: bytes
	MaxCheckpointFiles = 200      // files touched
)

// Checkpoint is an agent's work context during long work, saved so it can
// resume after a crash or a new session.
type Checkpoint struct {
	Agent string    `json:"agent" yaml:"agent"`
	Time  time.Time `json:"time,omitzero" yaml:"-"`
	Task  string    `json:"task" yaml:"task"`
	State string    `json:"state,omitempty" yaml:"state,omitempty"`
	Next  string    `json:"next,omitempty" yaml:"next,omitempty"`
	Files []string  `json:"files,omitempty" yaml:"files,omitempty"`
	Notes string    `json:"notes,omitempty" yaml:"notes,omitempty"`
	// Path is the vault-relative file it was loaded from.
	Path string `json:"path,omitempty" yaml:"-"`
	// Quarantine names the security rule (injection or role hijack) the
	// checkpoint's text hit when it was saved, or that text a person typed
	// into it hits: prompts show a "[QUARANTINED: rule]" line instead of
	// it ([Checkpoint.Masked]) until a person sets "quarantine: cleared"
	// in its frontmatter. "" when clean or cleared.
	Quarantine string `json:"quarantine,omitempty" yaml:"-"`
}

// QuarantineCleared is the frontmatter value of "quarantine" with which a
// person clears a quarantined checkpoint.
const QuarantineCleared = "cleared"

// Masked returns c as prompts show it: a quarantined checkpoint's task is
// its "[QUARANTINED: rule]" notice and its other text is dropped.
func (c Checkpoint) Masked() Checkpoint {
	if c.Quarantine != "" {
		c.Task = "[QUARANTINED: " + c.Quarantine + "] (see " + c.Path + ", nexus checkpoint show --raw)"
		c.State, c.Next, c.Files, c.Notes = "", "", nil, ""
	}
	return c
}

// scanFields runs the security scan (SPEC §2) over every text field.
func (c *Checkpoint) scanFields() (string, error) {
	fields := []string{"task", c.Task, "state", c.State, "next", c.Next, "notes", c.Notes}
	for _, f := range c.Files {
		fields = append(fields, "file", f)
	}
	return quarantineRule(scan.PlaceCheckpoint, fields...)
}

// fm is the frontmatter of a checkpoint file.
type checkpointFM struct {
	Agent string   `yaml:"agent"`
	Time  string   `yaml:"time"`
	Task  string   `yaml:"task"`
	State string   `yaml:"state,omitempty"`
	Next  string   `yaml:"next,omitempty"`
	Files []string `yaml:"files,omitempty"`
	Notes string   `yaml:"notes,omitempty"`
	// Quarantine is the rule a saved checkpoint's text hit, or "cleared".
	Quarantine string `yaml:"quarantine,omitempty"`
}

// CurrentCheckpointPath is the vault-relative path of an agent's latest
// checkpoint.
func CurrentCheckpointPath(agent string) string {
	return identity.Home(agent) + "/checkpoints/CURRENT.md"
}

// CheckpointHistoryDir is where an agent's earlier checkpoints are kept.
func CheckpointHistoryDir(agent string) string {
	return identity.Home(agent) + "/checkpoints/history"
}

func (c *Checkpoint) validate() error {
	c.Task, c.State, c.Next = strings.TrimSpace(c.Task), strings.TrimSpace(c.State), strings.TrimSpace(c.Next)
	c.Notes = strings.TrimSpace(c.Notes)
	if err := checkField("task", c.Task, MaxCheckpointField); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"state", c.State}, {"next", c.Next}} {
		if f.v != "" {
			if err := checkField(f.name, f.v, MaxCheckpointField); err != nil {
				return err
			}
		}
	}
	if c.Notes != "" {
		if err := checkField("notes", c.Notes, MaxCheckpointNotes); err != nil {
			return err
		}
	}
	if len(c.Files) > MaxCheckpointFiles {
		return fmt.Errorf("%d files, more than the %d allowed: %w", len(c.Files), MaxCheckpointFiles, ErrTooLarge)
	}
	files := c.Files[:0:0]
	for _, f := range c.Files {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if err := checkField("file", f, 1024); err != nil {
			return err
		}
		if strings.ContainsAny(f, "\r\n") {
			return fmt.Errorf("file %q must be one line: %w", f, vault.ErrInvalid)
		}
		files = append(files, f)
	}
	c.Files = files
	return nil
}

// Render returns the checkpoint as a markdown note. The frontmatter holds
// the fields; the body shows them for people.
func (c *Checkpoint) Render() ([]byte, error) {
	fm := checkpointFM{Agent: c.Agent, Time: c.Time.UTC().Format(time.RFC3339), Task: c.Task, State: c.State, Next: c.Next, Files: c.Files, Notes: c.Notes, Quarantine: c.Quarantine}
	y, err := yaml.Marshal(fm)
	if err != nil {
		return nil, fmt.Errorf("encode checkpoint: %w", err)
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(y)
	b.WriteString("---\n")
	if c.Quarantine != "" {
		// The body is what Obsidian, search and memory_get show: it
		// never repeats quarantined text, kept in the frontmatter.
		b.WriteString("# Checkpoint: [QUARANTINED: " + c.Quarantine + "]\n\n")
		b.WriteString("Saved " + c.Time.UTC().Format(time.RFC3339) + " by " + c.Agent + ". Its text failed the security scan (rule " + c.Quarantine +
			"): it is kept in the frontmatter above and withheld from agents until a person sets \"quarantine: cleared\" there (nexus checkpoint show --raw shows it).\n")
		return b.Bytes(), nil
	}
	b.WriteString("# Checkpoint: " + firstLine(c.Task) + "\n\n")
	b.WriteString("Saved " + c.Time.UTC().Format(time.RFC3339) + " by " + c.Agent + ".\n\n")
	if c.State != "" {
		b.WriteString("**State:** " + c.State + "\n\n")
	}
	if c.Next != "" {
		b.WriteString("**Next:** " + c.Next + "\n\n")
	}
	if len(c.Files) > 0 {
		b.WriteString("## Files\n")
		for _, f := range c.Files {
			b.WriteString("- `" + strings.ReplaceAll(f, "`", "'") + "`\n")
		}
		b.WriteString("\n")
	}
	if c.Notes != "" {
		b.WriteString("## Notes\n" + c.Notes + "\n")
	}
	return append(bytes.TrimRight(b.Bytes(), "\n"), '\n'), nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// parseCheckpoint reads a checkpoint note. The frontmatter is authoritative;
// the body is only a rendering.
func parseCheckpoint(data []byte) (*Checkpoint, error) {
	c, _, err := parseCheckpointFM(data)
	return c, err
}

// parseCheckpointFM is [parseCheckpoint], also returning the frontmatter
// as written.
func parseCheckpointFM(data []byte) (*Checkpoint, *checkpointFM, error) {
	fmText, _, ok := vault.SplitFrontmatter(data)
	if !ok {
		return nil, nil, fmt.Errorf("checkpoint has no frontmatter: %w", ErrCorrupt)
	}
	var fm checkpointFM
	if err := yaml.Unmarshal(fmText, &fm); err != nil {
		return nil, nil, fmt.Errorf("checkpoint frontmatter: %w", err)
	}
	c := &Checkpoint{Agent: fm.Agent, Task: fm.Task, State: fm.State, Next: fm.Next, Files: fm.Files, Notes: strings.TrimSpace(fm.Notes)}
	if t, err := time.Parse(time.RFC3339, fm.Time); err == nil {
		c.Time = t.UTC()
	}
	// Saved quarantined, or typed by a person (nobody scanned it): shown
	// quarantined until a person writes "quarantine: cleared". A secret a
	// person typed is held back the same way.
	switch q := strings.TrimSpace(fm.Quarantine); {
	case q == QuarantineCleared:
		// A person cleared injection phrasing; a secret is held back
		// whatever was cleared.
		if rule := scan.RuleOf(strings.Join(append([]string{c.Task, c.State, c.Next, c.Notes}, c.Files...), "\n")); rule != "" && !(&scan.Error{Rule: rule}).Quarantinable() {
			c.Quarantine = rule
		}
	case q != "":
		c.Quarantine = q
	default:
		rule, err := c.scanFields()
		var se *scan.Error
		if errors.As(err, &se) {
			rule = se.Rule
		}
		c.Quarantine = rule
	}
	return c, &fm, nil
}

// SaveCheckpoint makes c agent's current checkpoint, stamped with now. The
// previous CURRENT.md is kept, byte for byte, as
// checkpoints/history/TIME.md (TIME is its save time,
// "2006-01-02T15-04-05Z", with "-2", "-3"... if taken), and CURRENT.md is
// replaced atomically with compare-and-swap, so a person's concurrent edit
// is never overwritten (it becomes history instead). A previous checkpoint
// that is quarantined — saved so, or a person's text the scan catches now —
// goes into history with its quarantine recorded in its frontmatter, so the
// history copy is withheld like the original. The history keeps the newest
// checkpoint_history_keep (config.yaml, default 50); older ones are moved
// to review/archive/checkpoints/AGENT/, never deleted. Task is required.
//
// The previous checkpoint is kept by a hard link made next to CURRENT.md
// (".history-TIME.md") before the swap, so the one folder sync that makes
// the new CURRENT.md durable makes the kept one durable too: a save costs
// one file sync and one folder sync, as a write of a single file does. The
// link is then renamed into history/; one a crash left behind is moved
// there by the next save.
func SaveCheckpoint(v *vault.Vault, agent string, c Checkpoint, now time.Time) (Checkpoint, error) {
	// A damaged key in IDENTITY.md does not stop checkpoints; a missing
	// agent does.
	if _, err := identity.Load(v, agent); errors.Is(err, identity.ErrNoAgent) || errors.Is(err, vault.ErrInvalid) {
		return c, err
	}
	c.Agent, c.Time, c.Path = agent, now.UTC().Truncate(time.Second), CurrentCheckpointPath(agent)
	if err := c.validate(); err != nil {
		return c, err
	}
	// Secrets, exfiltration and invisible characters refuse the save;
	// injection phrasing is kept, quarantined.
	q, err := c.scanFields()
	if err != nil {
		return c, err
	}
	c.Quarantine = q
	data, err := c.Render()
	if err != nil {
		return c, err
	}
	unlock, err := v.Lock("checkpoint-" + agent)
	if err != nil {
		return c, err
	}
	defer unlock()
	cur := v.MustPath(c.Path)
	if err := vault.MkdirAll(filepath.Dir(cur), 0o755); err != nil {
		return c, fmt.Errorf("save checkpoint: %w", err)
	}
	for attempt := 0; ; attempt++ {
		old, err := vault.ReadStable(cur) // never build on a save caught half way
		if errors.Is(err, fs.ErrNotExist) {
			old, err = nil, nil
		}
		if err != nil {
			return c, fmt.Errorf("read checkpoint: %w", err)
		}
		if old != nil {
			if err := stageHistory(cur, old); err != nil {
				return c, err
			}
		}
		err = vault.ReplaceIf(cur, old, data, 0o644)
		if err == nil || vault.Written(err) {
			// Saved. Filing the kept checkpoint into history/ and
			// archiving the oldest cannot lose anything (renames, and a
			// staged link left by a failure is filed next time), so a
			// failure there does not turn a save into an error that a
			// caller would retry.
			fileHistory(v, agent)
			return c, err
		}
		if !errors.Is(err, vault.ErrConflict) || attempt >= vault.CASAttempts {
			return c, fmt.Errorf("save checkpoint: %w", err)
		}
	}
}

// stagedPrefix starts the name of a previous checkpoint staged next to
// CURRENT.md, on its way into history/.
const stagedPrefix = ".history-"

// stageHistory keeps old, the content of CURRENT.md (at cur), next to it
// as ".history-TIME.md": a hard link to the file itself, or, when the
// checkpoint is quarantined and its frontmatter does not say so yet (a
// person's text), a copy with the quarantine recorded.
func stageHistory(cur string, old []byte) error {
	t := time.Time{}
	keep := old
	if c, fm, err := parseCheckpointFM(old); err == nil {
		t = c.Time
		if c.Quarantine != "" && strings.TrimSpace(fm.Quarantine) == "" {
			keep = withQuarantine(old, c.Quarantine)
		}
	}
	if t.IsZero() {
		if st, err := vault.Stat(cur); err == nil {
			t = st.ModTime().UTC()
		}
	}
	dir := filepath.Dir(cur)
	base := stagedPrefix + t.UTC().Format("2006-01-02T15-04-05Z")
	for n := 1; ; n++ {
		name := base
		if n > 1 {
			name += "-" + strconv.Itoa(n)
		}
		p := filepath.Join(dir, name+".md")
		if n > 1000 {
			return fmt.Errorf("checkpoint history: too many checkpoints saved at %s", t.Format(time.RFC3339))
		}
		var err error
		if bytes.Equal(keep, old) {
			err = vault.Link(cur, p)
			if err == nil {
				// The link holds what CURRENT.md holds now; a save that
				// replaced it since our read is kept by the next attempt.
				if got, rerr := vault.ReadFile(p); rerr == nil && bytes.Equal(got, old) {
					return nil
				}
				vault.Remove(p)
				err = nil
			}
		}
		if err == nil || !errors.Is(err, fs.ErrExist) {
			// No hard links here (or the file changed): a copy.
			err = vault.ReplaceIf(p, nil, keep, 0o644)
			if err == nil || vault.Written(err) {
				return nil
			}
			if !errors.Is(err, vault.ErrConflict) {
				return fmt.Errorf("checkpoint history: %w", err)
			}
		}
		// The name is taken: by this very checkpoint (a retried save),
		// or by another saved in the same second.
		if existing, rerr := vault.ReadFile(p); rerr == nil && bytes.Equal(existing, keep) {
			return nil
		}
	}
}

// withQuarantine returns a checkpoint file's bytes with "quarantine: RULE"
// in its frontmatter (set, or added after the opening "---").
func withQuarantine(data []byte, rule string) []byte {
	fmText, _, ok := vault.SplitFrontmatter(data)
	line := []byte("quarantine: " + rule + "\n")
	if !ok {
		return data
	}
	start := bytes.Index(data, fmText)
	if start < 0 {
		return data
	}
	var out []byte
	out = append(out, data[:start]...)
	replaced := false
	for _, l := range bytes.SplitAfter(fmText, []byte("\n")) {
		if bytes.HasPrefix(l, []byte("quarantine:")) {
			l, replaced = line, true
		}
		out = append(out, l...)
	}
	if !replaced {
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		out = append(out, line...)
	}
	return append(out, data[start+len(fmText):]...)
}

// fileHistory moves the previous checkpoints staged next to CURRENT.md
// into history/ (without replacing a file there), then moves the oldest
// history files past checkpoint_history_keep into the archive. Both are
// renames: a crash half way leaves every checkpoint under one name or the
// other.
func fileHistory(v *vault.Vault, agent string) {
	dir := v.MustPath(identity.Home(agent) + "/checkpoints")
	hist := v.MustPath(CheckpointHistoryDir(agent))
	des, err := vault.ReadDir(dir)
	if err != nil {
		return
	}
	var inHist []string // history/'s names, listed once
	listed := false
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() || !strings.HasPrefix(name, stagedPrefix) || !strings.HasSuffix(name, ".md") {
			continue
		}
		if !listed {
			if err := vault.MkdirAll(hist, 0o755); err != nil {
				return
			}
			hdes, err := vault.ReadDir(hist)
			if err != nil {
				return
			}
			for _, hde := range hdes {
				inHist = append(inHist, hde.Name())
			}
			listed = true
		}
		if moved := fileIntoHistory(filepath.Join(dir, name), hist, strings.TrimPrefix(name, stagedPrefix), inHist); moved != "" {
			inHist = append(inHist, moved)
		}
	}
	archiveHistory(v, agent, v.Config().CheckpointHistory())
}

// fileIntoHistory moves the staged checkpoint src into the history folder
// hist, whose names are inHist, as name or, when checkpoints saved in the
// same second are there, as "TIME-N.md" with N one past the highest: a
// newer checkpoint never takes a lower number than an older one (whose
// lower-numbered siblings may have been archived already), and a burst of
// saves costs one link each, not one probe per name taken. It returns the
// name given ("" when none was). A src that is the newest of its second
// already (the same file: linked by a move that stopped before removing
// it) is removed. An unexpected name clash falls back to [moveNoReplace].
func fileIntoHistory(src, hist, name string, inHist []string) string {
	stamp, _ := splitHistoryName(name)
	top, newest := 0, ""
	for _, h := range inHist {
		if t, n := splitHistoryName(h); t == stamp && strings.HasSuffix(h, ".md") && n > top {
			top, newest = n, h
		}
	}
	if newest != "" {
		a, aerr := vault.Lstat(src)
		b, berr := vault.Lstat(filepath.Join(hist, newest))
		if aerr == nil && berr == nil && os.SameFile(a, b) {
			vault.Remove(src)
			return ""
		}
	}
	dst := name
	if top > 0 {
		dst = stamp + "-" + strconv.Itoa(top+1) + ".md"
	}
	if err := vault.Link(src, filepath.Join(hist, dst)); err != nil {
		moveNoReplace(src, hist, dst)
		return ""
	}
	vault.Remove(src)
	return dst
}

// archiveHistory moves agent's history files beyond the newest keep into
// review/archive/checkpoints/AGENT/.
func archiveHistory(v *vault.Vault, agent string, keep int) {
	if keep <= 0 {
		return
	}
	hist := v.MustPath(CheckpointHistoryDir(agent))
	des, err := vault.ReadDir(hist)
	if err != nil {
		return
	}
	var names []string
	for _, de := range des {
		if de.Type().IsRegular() && strings.HasSuffix(de.Name(), ".md") && !strings.HasPrefix(de.Name(), ".") {
			names = append(names, de.Name())
		}
	}
	if len(names) <= keep {
		return
	}
	sort.Slice(names, func(i, j int) bool { return historyLess(names[i], names[j]) })
	arch := v.MustPath(CheckpointArchiveDir(agent))
	if err := vault.MkdirAll(arch, 0o755); err != nil {
		return
	}
	for _, name := range names[:len(names)-keep] {
		moveNoReplace(filepath.Join(hist, name), arch, name)
	}
}

// historyLess orders history file names by save time, then by their
// "-N" suffix as a number ("T-2" before "T-10").
func historyLess(a, b string) bool {
	ta, na := splitHistoryName(a)
	tb, nb := splitHistoryName(b)
	if ta != tb {
		return ta < tb
	}
	return na < nb
}

func splitHistoryName(name string) (string, int) {
	base := strings.TrimSuffix(name, ".md")
	const stamp = len("2006-01-02T15-04-05Z")
	if len(base) > stamp+1 && base[stamp] == '-' {
		if n, err := strconv.Atoi(base[stamp+1:]); err == nil {
			return base[:stamp], n
		}
	}
	return base, 1
}

// moveNoReplace moves the file src into folder dir as name, or as
// "NAME-2.md", "NAME-3.md"... when a different file holds that name; a
// file with the same bytes there means it was moved before (src is then
// removed). It never replaces a file.
func moveNoReplace(src, dir, name string) {
	stem := strings.TrimSuffix(name, ".md")
	var data []byte // src's bytes, read when a name is taken
	for n := 1; n <= 1000; n++ {
		dst := filepath.Join(dir, name)
		if n > 1 {
			dst = filepath.Join(dir, stem+"-"+strconv.Itoa(n)+".md")
		}
		err := vault.Link(src, dst)
		if err == nil {
			vault.Remove(src)
			return
		}
		if !errors.Is(err, fs.ErrExist) {
			// No hard links here: check, then rename.
			if _, err := vault.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
				vault.Rename(src, dst)
				return
			}
		}
		if data == nil {
			if data, err = vault.ReadFile(src); err != nil {
				return
			}
		}
		if existing, err := vault.ReadFile(dst); err == nil && bytes.Equal(existing, data) {
			vault.Remove(src) // moved before
			return
		}
	}
}

// CheckpointArchiveDir is where an agent's checkpoints older than the
// history keeps are moved.
func CheckpointArchiveDir(agent string) string {
	return vault.ArchiveDir + "/checkpoints/" + agent
}

// LoadCheckpoint returns agent's current checkpoint, or [ErrNoCheckpoint].
func LoadCheckpoint(v *vault.Vault, agent string) (*Checkpoint, error) {
	if err := identity.ValidName(agent); err != nil {
		return nil, err
	}
	p := CurrentCheckpointPath(agent)
	data, err := vault.ReadFile(v.MustPath(p))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("agent %s: %w", agent, ErrNoCheckpoint)
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	c, err := parseCheckpoint(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	c.Path = p
	if c.Agent == "" {
		c.Agent = agent
	}
	return c, nil
}

// CheckpointHistory returns agent's earlier checkpoints, newest first.
// Files that do not parse are listed with only Path set.
func CheckpointHistory(v *vault.Vault, agent string) ([]Checkpoint, error) {
	if err := identity.ValidName(agent); err != nil {
		return nil, err
	}
	dir := CheckpointHistoryDir(agent)
	des, err := vault.ReadDir(v.MustPath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return []Checkpoint{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list checkpoint history: %w", err)
	}
	out := []Checkpoint{}
	for _, de := range des {
		if !de.Type().IsRegular() || !strings.HasSuffix(de.Name(), ".md") || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		p := dir + "/" + de.Name()
		c := &Checkpoint{}
		if data, err := vault.ReadFile(v.MustPath(p)); err == nil {
			if pc, err := parseCheckpoint(data); err == nil {
				c = pc
			}
		}
		c.Path = p
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Time.Equal(out[j].Time) {
			return out[i].Time.After(out[j].Time)
		}
		return out[i].Path > out[j].Path
	})
	return out, nil
}
