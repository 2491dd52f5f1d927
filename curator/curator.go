package curator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// The curator's proposals are review items of the kinds
// [retention.KindArchive], [retention.KindSpill], [retention.KindPromote]
// and [retention.KindMerge]; approving one carries it out here.
func init() {
	for _, k := range kinds {
		retention.RegisterKind(k, retention.KindHandler{Apply: apply, Landed: landed, Affected: affected})
	}
}

// kinds are the review item kinds the curator files.
var kinds = []string{retention.KindArchive, retention.KindSpill, retention.KindPromote, retention.KindMerge}

func isCuratorKind(k string) bool { return slices.Contains(kinds, k) }

// Fact states (docs/curation.md).
const (
	StateActive  = "active"
	StateStale   = "stale"
	StateArchive = "due for archive"
	StatePinned  = "pinned"
)

// curatorStatePath is the curator's machine-local state.
const curatorStatePath = vault.StateDir + "/curator/state.json"

// curatorState is what the curator remembers on this machine.
type curatorState struct {
	// Installed is when the curator first saw this vault on this machine;
	// recall signals start then, so no fact is older than that to it.
	Installed time.Time `json:"installed"`
	LastPass  time.Time `json:"last_pass,omitzero"`
	LastID    string    `json:"last_pass_id,omitempty"`
}

func loadCuratorState(v *vault.Vault, now time.Time) (curatorState, error) {
	var st curatorState
	p := v.MustPath(curatorStatePath)
	data, err := vault.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return st, fmt.Errorf("read curator state: %w", err)
	}
	if len(data) > 0 && json.Unmarshal(data, &st) != nil {
		st = curatorState{} // machine-local and derived: start over
	}
	if st.Installed.IsZero() {
		st.Installed = now.UTC().Truncate(time.Second)
		if err := saveCuratorState(v, st); err != nil {
			return st, err
		}
	}
	return st, nil
}

func saveCuratorState(v *vault.Vault, st curatorState) error {
	p := v.MustPath(curatorStatePath)
	if err := vault.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("write curator state: %w", err)
	}
	data, _ := json.MarshalIndent(st, "", "  ")
	return vault.WriteFile(p, append(data, '\n'), 0o644)
}

// FactState is one fact as the curator sees it.
type FactState struct {
	Slug  string `json:"slug"`
	Name  string `json:"name"`
	Path  string `json:"path"`
	State string `json:"state"`
	// LastUse is the latest of the fact's last recall, its created and
	// updated times, and when the curator started watching.
	LastUse time.Time `json:"last_use"`
	// IdleDays are whole days since LastUse.
	IdleDays int        `json:"idle_days"`
	Use      agents.Use `json:"use"`
	// Shown counts this agent's session starts (each lists every fact in
	// the memory index) since the fact was created.
	Shown   int       `json:"shown"`
	Created time.Time `json:"created,omitzero"`
	Updated time.Time `json:"updated,omitzero"`
	sha     string
	data    []byte
}

// FactStates returns every fact of agent with its recall signals and
// state, most idle first.
func FactStates(v *vault.Vault, agent string, now time.Time) ([]FactState, error) {
	rec, err := agents.LoadRecall(v)
	if err != nil {
		return nil, err
	}
	st, err := loadCuratorState(v, now)
	if err != nil {
		return nil, err
	}
	return factStates(v, agent, rec, installedAt(st, rec), now)
}

// installedAt is when signals started: the curator's first sight of the
// vault, or the first recall recorded, whichever came first.
func installedAt(st curatorState, rec *agents.RecallSummary) time.Time {
	if !rec.First.IsZero() && rec.First.Before(st.Installed) {
		return rec.First
	}
	return st.Installed
}

func factStates(v *vault.Vault, agent string, rec *agents.RecallSummary, installed, now time.Time) ([]FactState, error) {
	facts, err := agents.ListFacts(v, agent)
	if err != nil {
		return nil, err
	}
	cfg := v.Config().Curator
	sess := rec.Session(agent)
	out := make([]FactState, 0, len(facts))
	for _, f := range facts {
		data, err := vault.ReadFile(v.MustPath(f.Path))
		if err != nil {
			continue // removed meanwhile
		}
		sum := sha256.Sum256(data)
		fs := FactState{Slug: f.Slug, Name: f.Name, Path: f.Path, Use: rec.File(f.Path), Created: f.Created, Updated: f.Updated,
			sha: hex.EncodeToString(sum[:]), data: data}
		fs.LastUse = latest(installed, f.Created, f.Updated, fs.Use.Last())
		if sess.Count > 0 && sess.Last.After(f.Created) {
			fs.Shown = sess.Count // an upper bound when the fact came after some starts
		}
		fs.IdleDays = int(now.Sub(fs.LastUse) / (24 * time.Hour))
		switch {
		case agents.FactPinned(data):
			fs.State = StatePinned
		case fs.IdleDays >= cfg.ArchiveDays():
			fs.State = StateArchive
		case fs.IdleDays >= cfg.StaleDays():
			fs.State = StateStale
		default:
			fs.State = StateActive
		}
		out = append(out, fs)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].LastUse.Before(out[j].LastUse) })
	return out, nil
}

func latest(ts ...time.Time) time.Time {
	var m time.Time
	for _, t := range ts {
		if t.After(m) {
			m = t
		}
	}
	return m
}

// Pressure is how full one bounded-memory file is.
type Pressure struct {
	Target  string `json:"target"`
	Usage   string `json:"usage"`
	Chars   int    `json:"chars"`
	Limit   int    `json:"limit"`
	Entries int    `json:"entries"`
	// Over is true at or past the curator's pressure threshold.
	Over bool `json:"over"`
}

// AgentCuration is one agent in [Status].
type AgentCuration struct {
	Agent    string         `json:"agent"`
	Memory   Pressure       `json:"memory"`
	User     Pressure       `json:"user"`
	Facts    map[string]int `json:"facts"`
	Archived int            `json:"archived"`
	// Waiting are curator proposals for this agent in review/pending/.
	Waiting []retention.Item `json:"waiting"`
}

// StatusResult is what 'nexus curator status' shows.
type StatusResult struct {
	Installed time.Time       `json:"installed"`
	LastPass  time.Time       `json:"last_pass,omitzero"`
	NextPass  time.Time       `json:"next_pass"`
	Config    map[string]int  `json:"config"`
	Agents    []AgentCuration `json:"agents"`
	// WouldDo is what a pass now would propose (a dry run).
	WouldDo []Proposal `json:"would_do"`
}

// Status reports, per agent, memory pressure, facts by state,
// archived facts and waiting proposals, and what a pass would do now.
func Status(v *vault.Vault, agent string, now time.Time) (StatusResult, error) {
	var res StatusResult
	st, err := loadCuratorState(v, now)
	if err != nil {
		return res, err
	}
	rec, err := agents.LoadRecall(v)
	if err != nil {
		return res, err
	}
	cfg := v.Config().Curator
	res.Installed, res.LastPass = installedAt(st, rec), st.LastPass
	res.NextPass = latest(res.Installed.Add(cfg.Every()), st.LastPass.Add(cfg.Every()))
	res.Config = map[string]int{"stale_days": cfg.StaleDays(), "archive_days": cfg.ArchiveDays(), "pressure_percent": cfg.PressurePercent(),
		"promote_recalls": cfg.PromoteRecalls(), "promote_queries": cfg.PromoteQueries(), "merge_percent": cfg.MergePercent(), "every_hours": int(cfg.Every() / time.Hour), "idle_seconds": int(cfg.Idle() / time.Second)}
	names, err := curatedAgents(v, agent)
	if err != nil {
		return res, err
	}
	pending, err := retention.List(v, retention.Filter{Agent: agent})
	if err != nil {
		return res, err
	}
	for _, a := range names {
		ac := AgentCuration{Agent: a, Facts: map[string]int{StateActive: 0, StateStale: 0, StateArchive: 0, StatePinned: 0}, Waiting: []retention.Item{}}
		for _, t := range []agents.Target{agents.TargetMemory, agents.TargetUser} {
			p, _, err := pressure(v, a, t)
			if err != nil {
				return res, err
			}
			if t == agents.TargetMemory {
				ac.Memory = p
			} else {
				ac.User = p
			}
		}
		fss, err := factStates(v, a, rec, res.Installed, now)
		if err != nil {
			return res, err
		}
		for _, f := range fss {
			ac.Facts[f.State]++
		}
		if des, err := vault.ReadDir(v.MustPath(agents.ArchivedFactsDir(a))); err == nil {
			for _, de := range des {
				if strings.HasSuffix(de.Name(), ".md") {
					ac.Archived++
				}
			}
		}
		for _, it := range pending {
			if it.Agent == a && isCuratorKind(it.Kind) {
				ac.Waiting = append(ac.Waiting, it)
			}
		}
		res.Agents = append(res.Agents, ac)
	}
	pass, err := Run(v, PassOptions{Now: now, DryRun: true, Agent: agent})
	if err != nil {
		return res, err
	}
	res.WouldDo = pass.Proposals
	if res.WouldDo == nil {
		res.WouldDo = []Proposal{}
	}
	return res, nil
}

func curatedAgents(v *vault.Vault, agent string) ([]string, error) {
	if agent != "" {
		if err := identity.Check(v, agent); err != nil {
			return nil, err
		}
		return []string{agent}, nil
	}
	return identity.List(v)
}

func pressure(v *vault.Vault, agent string, t agents.Target) (Pressure, *agents.Memory, error) {
	m, err := agents.OpenMemory(v, agent, t)
	if err != nil {
		return Pressure{}, nil, err
	}
	entries, err := m.Entries()
	if err != nil {
		return Pressure{}, nil, err
	}
	chars := agents.CharCount(entries)
	return Pressure{Target: string(t), Usage: agents.FormatUsage(chars, m.Limit()), Chars: chars, Limit: m.Limit(), Entries: len(entries),
		Over: chars*100 >= m.Limit()*v.Config().Curator.PressurePercent()}, m, nil
}
