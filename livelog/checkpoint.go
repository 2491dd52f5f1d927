package livelog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
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
	fmText, _, ok := vault.SplitFrontmatter(data)
	if !ok {
		return nil, fmt.Errorf("checkpoint has no frontmatter: %w", ErrCorrupt)
	}
	var fm checkpointFM
	if err := yaml.Unmarshal(fmText, &fm); err != nil {
		return nil, fmt.Errorf("checkpoint frontmatter: %w", err)
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
	return c, nil
}

// SaveCheckpoint makes c agent's current checkpoint, stamped with now. The
// previous CURRENT.md is first copied, byte for byte, to
// checkpoints/history/TIME.md (TIME is its save time, "2006-01-02T15-04-05Z",
// with "-2", "-3"... if taken), then CURRENT.md is replaced atomically with
// compare-and-swap, so a person's concurrent edit is never overwritten (it
// becomes history instead). Task is required.
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
			if err := keepHistory(v, agent, cur, old); err != nil {
				return c, err
			}
		}
		err = vault.ReplaceIf(cur, old, data, 0o644)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, vault.ErrConflict) || attempt >= vault.CASAttempts {
			return c, fmt.Errorf("save checkpoint: %w", err)
		}
	}
}

func keepHistory(v *vault.Vault, agent, cur string, old []byte) error {
	t := time.Time{}
	if c, err := parseCheckpoint(old); err == nil {
		t = c.Time
	}
	if t.IsZero() {
		if st, err := vault.Stat(cur); err == nil {
			t = st.ModTime().UTC()
		}
	}
	dir := v.MustPath(CheckpointHistoryDir(agent))
	if err := vault.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("checkpoint history: %w", err)
	}
	base := t.UTC().Format("2006-01-02T15-04-05Z")
	for n := 1; ; n++ {
		name := base
		if n > 1 {
			name += "-" + strconv.Itoa(n)
		}
		p := filepath.Join(dir, name+".md")
		if existing, err := vault.ReadFile(p); err == nil && bytes.Equal(existing, old) {
			return nil // already kept (a retried save)
		}
		err := vault.ReplaceIf(p, nil, old, 0o644)
		if err == nil {
			return nil
		}
		if !errors.Is(err, vault.ErrConflict) || n > 1000 {
			return fmt.Errorf("checkpoint history: %w", err)
		}
	}
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
