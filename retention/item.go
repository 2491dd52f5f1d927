package retention

import (
	"bytes"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/vault"
)

// Kinds of pending item.
const (
	// KindFact proposes a fact file (SPEC §3).
	KindFact = "fact"
	// KindMemory is a bounded-memory write (SPEC §2) held by the review gate.
	KindMemory = "memory"
	// KindConflict is a pending item filed by sync-conflict
	// reconciliation (package conflicts): two versions of a file that do
	// not merge without judgement. The file holds one (this machine's, or
	// git's first side); the other is archived under
	// review/archive/conflicts/ and named by the item's provenance source.
	// Approving puts the other version in place of the file; rejecting
	// keeps the file as it is (edit it by hand first to keep parts of
	// both). Package conflicts carries it out, through the [KindHandler]
	// it registers.
	KindConflict = "conflict"
)

// Statuses of an item. A person sets approved or rejected in Obsidian;
// Nexus moves decided items to review/archive/.
const (
	StatusPending  = "pending"
	StatusApproved = "approved"
	StatusRejected = "rejected"
)

// Provenance says where a proposal came from.
type Provenance struct {
	Agent   string    `json:"agent" yaml:"agent"`
	Session string    `json:"session,omitempty" yaml:"session,omitempty"`
	Time    time.Time `json:"time" yaml:"time"`
	Source  string    `json:"source,omitempty" yaml:"source,omitempty"`
}

// Item is one proposal: a file review/pending/ID.md, or after a decision
// review/archive/ID.md.
type Item struct {
	ID     string `json:"id"`
	Agent  string `json:"agent"`
	Kind   string `json:"kind"`
	Status string `json:"status"`
	// Target is what approval would write: the proposed fact file's
	// vault-relative path, or "memory" / "user" for a memory write.
	Target     string     `json:"target"`
	Provenance Provenance `json:"provenance"`

	// Fact proposals.
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	FactType    string `json:"type,omitempty"`
	Update      bool   `json:"update,omitempty"`

	// Memory writes: Ops holds the operations; for a single add or
	// replace the content is also the body.
	Ops []agents.Op `json:"ops,omitempty"`

	// Body is the fact (or the entry) as a person reads and may edit it.
	Body string `json:"body"`

	// Error is why the last attempt to apply an approval failed.
	Error string `json:"error,omitempty"`

	DecidedBy string    `json:"decided_by,omitempty"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
	Why       string    `json:"why,omitempty"`
	// Result is what approval produced (a fact file's path, or the
	// memory file written).
	Result string `json:"result,omitempty"`
	// SignedBy and Signature are a person's signature of the decision
	// (review.require_person_key; docs/review.md): the key's name, and the
	// base64 ed25519 signature of [Item.Statement].
	SignedBy  string `json:"signed_by,omitempty"`
	Signature string `json:"signature,omitempty"`

	// Path is the item's vault-relative file.
	Path string `json:"path"`
}

// Summary is the item's one-line description for listings.
func (it Item) Summary() string {
	s := it.Name
	if it.Kind == KindMemory {
		if len(it.Ops) == 1 {
			s = it.Ops[0].Action + ": " + firstNonEmpty(it.Ops[0].Content, it.Ops[0].OldText)
		} else {
			s = fmt.Sprintf("%d operations", len(it.Ops))
		}
	} else if it.Description != "" && it.Description != it.Name {
		s += " — " + it.Description
	}
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 100 {
		s = string([]rune(s)[:99]) + "…"
	}
	return s
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// FactInput is the fact a fact proposal would write.
func (it Item) FactInput() agents.FactInput {
	src := "review:" + it.ID
	if it.Provenance.Source != "" && utf8.RuneCountInString(it.Provenance.Source)+len(src)+2 <= agents.MaxFactSourceRunes {
		src = it.Provenance.Source + "; " + src
	}
	return agents.FactInput{Name: it.Name, Description: it.Description, Type: it.FactType, Body: it.Body, Source: src, Update: it.Update}
}

// frontmatter is the on-disk form, in the order a person reads it.
type frontmatter struct {
	ID          string      `yaml:"id"`
	Agent       string      `yaml:"agent"`
	Kind        string      `yaml:"kind"`
	Target      string      `yaml:"target"`
	Status      string      `yaml:"status"`
	Name        string      `yaml:"name,omitempty"`
	Description string      `yaml:"description,omitempty"`
	Type        string      `yaml:"type,omitempty"`
	Update      bool        `yaml:"update,omitempty"`
	Action      string      `yaml:"action,omitempty"`
	OldText     string      `yaml:"old_text,omitempty"`
	Ops         []yamlOp    `yaml:"ops,omitempty"`
	Provenance  *yamlProven `yaml:"provenance,omitempty"`
	Error       string      `yaml:"error,omitempty"`
	DecidedBy   string      `yaml:"decided_by,omitempty"`
	DecidedAt   string      `yaml:"decided_at,omitempty"`
	Why         string      `yaml:"why,omitempty"`
	Result      string      `yaml:"result,omitempty"`
	SignedBy    string      `yaml:"signed_by,omitempty"`
	Signature   string      `yaml:"signature,omitempty"`
}

type yamlOp struct {
	Action  string `yaml:"action"`
	Content string `yaml:"content,omitempty"`
	OldText string `yaml:"old_text,omitempty"`
}

type yamlProven struct {
	Agent   string `yaml:"agent"`
	Session string `yaml:"session,omitempty"`
	Time    string `yaml:"time"`
	Source  string `yaml:"source,omitempty"`
}

// fmtTimeMilli is [fmtTime] with milliseconds when there are any.
func fmtTimeMilli(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	if t.Nanosecond() >= int(time.Millisecond) {
		return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	return t.UTC().Format(time.RFC3339)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// Render formats the item as a markdown file: YAML frontmatter, then the
// body.
func (it Item) Render() ([]byte, error) {
	fm := frontmatter{ID: it.ID, Agent: it.Agent, Kind: it.Kind, Target: it.Target, Status: it.Status,
		Name: it.Name, Description: it.Description, Type: it.FactType, Update: it.Update,
		Provenance: &yamlProven{Agent: it.Provenance.Agent, Session: it.Provenance.Session, Time: fmtTimeMilli(it.Provenance.Time), Source: it.Provenance.Source},
		Error:      it.Error, DecidedBy: it.DecidedBy, DecidedAt: fmtTime(it.DecidedAt), Why: it.Why, Result: it.Result,
		SignedBy: it.SignedBy, Signature: it.Signature}
	body := it.Body
	if it.Kind == KindMemory {
		switch {
		case len(it.Ops) == 1 && it.Ops[0].Action != agents.ActionRemove:
			fm.Action, fm.OldText = it.Ops[0].Action, it.Ops[0].OldText
			body = it.Ops[0].Content
		case len(it.Ops) == 1:
			fm.Action, fm.OldText = it.Ops[0].Action, it.Ops[0].OldText
			body = "Remove the entry matching: " + it.Ops[0].OldText
		default:
			for _, op := range it.Ops {
				fm.Ops = append(fm.Ops, yamlOp(op))
			}
			body = renderOps(it.Ops)
		}
	}
	out, err := yaml.Marshal(fm)
	if err != nil {
		return nil, fmt.Errorf("encode review item %s: %w", it.ID, err)
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(out)
	b.WriteString("---\n")
	b.WriteString(strings.TrimSpace(body))
	b.WriteString("\n")
	return b.Bytes(), nil
}

func renderOps(ops []agents.Op) string {
	var b strings.Builder
	b.WriteString("These memory operations apply together (all or nothing); they are listed under ops: above.\n")
	for i, op := range ops {
		fmt.Fprintf(&b, "\n%d. %s", i+1, op.Action)
		if op.OldText != "" {
			fmt.Fprintf(&b, " (entry matching %q)", op.OldText)
		}
		if op.Content != "" {
			b.WriteString(": " + strings.Join(strings.Fields(op.Content), " "))
		}
	}
	return b.String()
}

// ParseItem parses a pending or archived item file. id is the file's stem,
// used when the frontmatter lacks one. It fails (wrapping
// [vault.ErrInvalid]) on a file without readable frontmatter or without a
// kind; it never panics.
func ParseItem(id string, data []byte) (Item, error) {
	it := Item{ID: id}
	if !utf8.Valid(data) {
		return it, fmt.Errorf("review item %s is not UTF-8 text: %w", id, vault.ErrInvalid)
	}
	raw, body, ok := vault.SplitFrontmatter(data)
	if !ok {
		return it, fmt.Errorf("review item %s has no frontmatter: %w", id, vault.ErrInvalid)
	}
	fm, fast := fastFrontmatter(raw)
	if !fast {
		fm = frontmatter{}
		if err := yaml.Unmarshal(raw, &fm); err != nil {
			return it, fmt.Errorf("review item %s: frontmatter: %w", id, vault.ErrInvalid)
		}
	}
	// The file name is the item's identity: a copied file keeps its
	// source's id: line, and must not act on the source's file.
	if it.ID == "" {
		it.ID = fm.ID
	}
	it.Agent, it.Kind, it.Target = fm.Agent, fm.Kind, fm.Target
	it.Status = strings.ToLower(strings.TrimSpace(fm.Status))
	if it.Status == "" {
		it.Status = StatusPending
	}
	it.Name, it.Description, it.FactType, it.Update = fm.Name, fm.Description, fm.Type, fm.Update
	it.Error, it.DecidedBy, it.Why, it.Result = fm.Error, fm.DecidedBy, fm.Why, fm.Result
	it.DecidedAt = parseTime(fm.DecidedAt)
	it.SignedBy, it.Signature = fm.SignedBy, fm.Signature
	if fm.Provenance != nil {
		it.Provenance = Provenance{Agent: fm.Provenance.Agent, Session: fm.Provenance.Session, Time: parseTime(fm.Provenance.Time), Source: fm.Provenance.Source}
	}
	it.Body = strings.TrimSpace(strings.ReplaceAll(string(body), "\r\n", "\n"))
	switch it.Kind {
	case KindFact, KindConflict, KindArchive, KindSpill, KindPromote, KindMerge:
	case KindMemory:
		switch {
		case len(fm.Ops) > 0:
			for _, op := range fm.Ops {
				it.Ops = append(it.Ops, agents.Op(op))
			}
		case fm.Action == agents.ActionRemove:
			it.Ops = []agents.Op{{Action: fm.Action, OldText: fm.OldText}}
		case fm.Action != "":
			it.Ops = []agents.Op{{Action: fm.Action, Content: it.Body, OldText: fm.OldText}}
		default:
			return it, fmt.Errorf("review item %s: memory write without action: %w", id, vault.ErrInvalid)
		}
		for _, op := range it.Ops {
			switch op.Action {
			case agents.ActionAdd, agents.ActionReplace, agents.ActionRemove:
			default:
				return it, fmt.Errorf("review item %s: memory action %q is not add, replace or remove: %w", id, op.Action, vault.ErrInvalid)
			}
		}
	default:
		return it, fmt.Errorf("review item %s: unknown kind %q: %w", id, it.Kind, vault.ErrInvalid)
	}
	return it, nil
}

func parseTime(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
