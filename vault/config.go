package vault

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is .nexus/config.yaml. Unknown keys are ignored when reading.
type Config struct {
	MemoryCharLimit int `yaml:"memory_char_limit"`
	UserCharLimit   int `yaml:"user_char_limit"`
	// MemoryIndexLineLimit bounds memory/INDEX.md, one line per fact.
	MemoryIndexLineLimit int `yaml:"memory_index_line_limit"`
	// PromptLogEntries is how many unread log entries the session-start
	// render shows (the newest ones, with a line saying how many more).
	PromptLogEntries int          `yaml:"prompt_log_entries"`
	Review           ReviewConfig `yaml:"review"`
	// SnapshotsKeep is how many snapshots of bulk changes are kept.
	SnapshotsKeep int `yaml:"snapshots_keep"`
	// CheckpointHistoryKeep is how many earlier checkpoints each agent
	// keeps in checkpoints/history/; older ones are moved to the archive.
	// Left out or zero: [DefaultCheckpointHistoryKeep] (see
	// [Config.CheckpointHistory]).
	CheckpointHistoryKeep int `yaml:"checkpoint_history_keep,omitempty"`
	// Agents holds per-agent settings, such as the hash of its HTTP token.
	Agents map[string]AgentConfig `yaml:"agents,omitempty"`
	// Curator tunes the curator's passes (docs/curation.md). Left out, or
	// any setting left zero, takes the default.
	Curator CuratorConfig `yaml:"curator,omitempty"`
	// Search holds the search command's settings.
	Search SearchConfig `yaml:"search,omitempty"`
	// LockTimeout bounds every wait for a lock ("30s", "2m", or a number
	// of seconds); left out, zero or not a duration: [DefaultLockTimeout].
	// See [Config.LockWait].
	LockTimeout string `yaml:"lock_timeout,omitempty"`
}

// DefaultCheckpointHistoryKeep is checkpoint_history_keep's default: 50
// checkpoints at one save a step is a long day's work; older ones are
// archived, never deleted.
const DefaultCheckpointHistoryKeep = 50

// CheckpointHistory is how many earlier checkpoints each agent keeps in
// checkpoints/history/: checkpoint_history_keep, or
// [DefaultCheckpointHistoryKeep] when it is left out or not positive.
func (c Config) CheckpointHistory() int {
	if c.CheckpointHistoryKeep <= 0 {
		return DefaultCheckpointHistoryKeep
	}
	return c.CheckpointHistoryKeep
}

// LockWait is how long a command waits for a lock (lock_timeout) before it
// gives up and names the holder: [DefaultLockTimeout] unless lock_timeout
// is a positive duration.
func (c Config) LockWait() time.Duration {
	d, err := ParseLockTimeout(c.LockTimeout)
	if err != nil || d <= 0 {
		return DefaultLockTimeout
	}
	return d
}

// ParseLockTimeout reads a lock_timeout value: a Go duration ("30s",
// "1m30s", "500ms") or a whole number of seconds. "" is 0 (the default).
func ParseLockTimeout(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("lock_timeout %q: want a duration like 30s or 2m", s)
	}
	return d, nil
}

// SearchConfig is the search: section.
type SearchConfig struct {
	// Hold is how long the background index holder that 'nexus search'
	// starts stays after the last search ("10m"; "0" or "off": none).
	// Set, it also starts one from a non-interactive run (a script, CI),
	// which otherwise starts none.
	Hold string `yaml:"hold,omitempty"`
	// Embeddings configures recall by meaning (docs/embeddings.md); left
	// out, search ranks by words alone.
	Embeddings EmbeddingsConfig `yaml:"embeddings,omitempty"`
}

// ReviewConfig is the review gate.
type ReviewConfig struct {
	// WriteApproval makes memory-tool writes wait in review/pending/.
	WriteApproval bool `yaml:"write_approval"`
	// RequirePersonKey makes every decision (approve, reject, rollback,
	// curator proposals) need a signature by a person's review key
	// ('nexus person init', docs/review.md); approvals set in Obsidian
	// wait for 'nexus review sign'.
	RequirePersonKey bool `yaml:"require_person_key,omitempty"`
}

// AgentConfig is one agent's entry under agents: in config.yaml.
type AgentConfig struct {
	// TokenSHA256 is the hex SHA-256 of the agent's bearer token for
	// 'nexus serve --http'. The token itself is never stored.
	TokenSHA256 string `yaml:"token_sha256,omitempty"`
}

// DefaultConfig returns the configuration of a new vault.
func DefaultConfig() Config {
	return Config{
		MemoryCharLimit:      2200,
		UserCharLimit:        1375,
		MemoryIndexLineLimit: 200,
		PromptLogEntries:     20,
		SnapshotsKeep:        20,
	}
}

const defaultConfigYAML = `# Nexus vault configuration. Edit freely; Nexus reads it at each start.

# Bounded memory limits, in Unicode code points (docs/memory.md).
memory_char_limit: 2200   # agents/AGENT/MEMORY.md
user_char_limit: 1375     # agents/AGENT/USER.md

# Lines allowed in agents/AGENT/memory/INDEX.md (one per fact file).
memory_index_line_limit: 200

# Unread live-log entries shown in the session-start render.
prompt_log_entries: 20

review:
  # true: writes by the memory tool wait in review/pending/ for a person.
  write_approval: false
  # true: approving, rejecting and rolling back need the passphrase of a
  # person's review key ('nexus person init'; docs/review.md).
  require_person_key: false

# Snapshots of bulk changes (approve --all, rollback) to keep.
snapshots_keep: 20

# How long a command waits for a lock another process holds before it
# gives up and names that process (docs/operations.md). Default 30s.
# lock_timeout: 30s

# Per-agent settings; 'nexus agent token NAME' stores token hashes here.
agents: {}
`

func loadConfig(path string) (Config, error) {
	data, err := ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return DefaultConfig(), nil
	}
	if err != nil {
		return DefaultConfig(), fmt.Errorf("read config: %w", err)
	}
	return parseConfig(data)
}

// parseConfig reads config.yaml's text; settings it leaves out or sets to
// zero take their defaults.
func parseConfig(data []byte) (Config, error) {
	cfg := DefaultConfig()
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return cfg, fmt.Errorf("parse %s: %w", ConfigFile, err)
	}
	def := DefaultConfig()
	for _, f := range []struct {
		p *int
		d int
	}{
		{&cfg.MemoryCharLimit, def.MemoryCharLimit},
		{&cfg.UserCharLimit, def.UserCharLimit},
		{&cfg.MemoryIndexLineLimit, def.MemoryIndexLineLimit},
		{&cfg.PromptLogEntries, def.PromptLogEntries},
		{&cfg.SnapshotsKeep, def.SnapshotsKeep},
	} {
		if *f.p <= 0 {
			*f.p = f.d
		}
	}
	return cfg, nil
}

// UpdateConfig changes .nexus/config.yaml under the config lock: it re-reads
// the file, applies fn to it, and writes it back atomically. Comments and
// the order of keys a person wrote are kept; keys fn did not touch keep
// their text.
func (v *Vault) UpdateConfig(fn func(*Config) error) error {
	unlock, err := v.Lock("config")
	if err != nil {
		return err
	}
	defer unlock()
	path := v.MustPath(ConfigFile)
	for try := 0; ; try++ {
		old, err := ReadStable(path) // a person may be saving it right now
		if errors.Is(err, fs.ErrNotExist) {
			old = nil
		} else if err != nil {
			return fmt.Errorf("read config: %w", err)
		}
		cfg, err := parseConfig(old) // the text read above, not a second read
		if err != nil {
			return err
		}
		if err := fn(&cfg); err != nil {
			return err
		}
		data, err := mergeConfig(old, cfg)
		if err != nil {
			return err
		}
		// A person may be saving config.yaml right now: never overwrite
		// their save, redo the change on top of it.
		err = ReplaceIf(path, old, data, 0o644)
		if errors.Is(err, ErrConflict) && try < CASAttempts {
			continue
		}
		if err != nil {
			return err
		}
		v.config.Store(&cfg)
		return nil
	}
}

// mergeConfig writes cfg's values into the YAML document old, node by node,
// so that comments and unrelated keys survive.
func mergeConfig(old []byte, cfg Config) ([]byte, error) {
	var doc yaml.Node
	if len(old) > 0 {
		if err := yaml.Unmarshal(old, &doc); err != nil {
			return nil, fmt.Errorf("parse %s: %w", ConfigFile, err)
		}
	}
	var fresh yaml.Node
	if err := fresh.Encode(cfg); err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return yaml.Marshal(cfg)
	}
	mergeMapping(doc.Content[0], &fresh)
	var out strings.Builder
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2) // as people and the default file write it
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	return keepLayout(old, []byte(out.String())), nil
}

// keepLayout gives the re-encoded config new the layout of the person's
// file old: yaml.v3 keeps comments and key order but drops blank lines
// and re-spaces lines ("2200   # note" becomes "2200 # note"). Lines of
// old and new are aligned by a longest common subsequence of their
// non-blank lines, compared with runs of spaces collapsed; an aligned
// line is written as the person wrote it, and each run of blank lines
// goes back before the line it preceded (or before what replaced that
// line). Lines that differ are new's. (Collapsing spaces could hide a
// change inside a quoted value that only adds or removes spaces; no
// setting of config.yaml is such a string.)
func keepLayout(old, new []byte) []byte {
	if len(bytes.TrimSpace(old)) == 0 || bytes.Contains(old, []byte("\r")) {
		return new // nothing to keep, or CRLF lines the encoder does not write
	}
	out := alignLayout(old, new)
	// A blank line inside a multi-line value is part of the value: if
	// putting one back changed what the file says, keep the encoder's.
	var want, got any
	if yaml.Unmarshal(new, &want) != nil || yaml.Unmarshal(out, &got) != nil || !reflect.DeepEqual(want, got) {
		return new
	}
	return out
}

func alignLayout(old, new []byte) []byte {
	lines := func(s []byte) []string {
		t := strings.TrimSuffix(string(s), "\n")
		if t == "" {
			return nil
		}
		return strings.Split(t, "\n")
	}
	key := func(l string) string {
		indent := len(l) - len(strings.TrimLeft(l, " "))
		return l[:indent] + strings.Join(strings.Fields(l), " ")
	}
	var a, akey []string // old's non-blank lines
	var blanks []int     // blanks[k]: blank lines before a[k]; the last entry: at the end
	run := 0
	for _, l := range lines(old) {
		if strings.TrimSpace(l) == "" {
			run++
			continue
		}
		a, akey = append(a, l), append(akey, key(l))
		blanks = append(blanks, run)
		run = 0
	}
	blanks = append(blanks, run)
	var b, bkey []string // new's non-blank lines
	for _, l := range lines(new) {
		if strings.TrimSpace(l) != "" {
			b, bkey = append(b, l), append(bkey, key(l))
		}
	}
	if len(a)*len(b) > 1<<22 { // a config file is a few dozen lines
		return new
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if akey[i] == bkey[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && akey[i] == bkey[j]:
			out.WriteString(strings.Repeat("\n", blanks[i]))
			out.WriteString(a[i] + "\n")
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			// a[i] is gone or changed: its blank lines stay, and what
			// replaces it follows them.
			out.WriteString(strings.Repeat("\n", blanks[i]))
			i++
		default:
			out.WriteString(b[j] + "\n")
			j++
		}
	}
	out.WriteString(strings.Repeat("\n", blanks[len(a)]))
	return []byte(out.String())
}

// mergeMapping sets every key of src into dst, recursing into mappings and
// keeping dst's comments where the key already exists.
func mergeMapping(dst, src *yaml.Node) {
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, val := src.Content[i], src.Content[i+1]
		found := false
		for j := 0; j+1 < len(dst.Content); j += 2 {
			if dst.Content[j].Value != k.Value {
				continue
			}
			found = true
			d := dst.Content[j+1]
			if d.Kind == yaml.MappingNode && val.Kind == yaml.MappingNode {
				d.Style = 0
				mergeMapping(d, val)
			} else if d.Kind == val.Kind && d.Kind == yaml.ScalarNode {
				d.Value, d.Tag, d.Style = val.Value, val.Tag, val.Style
			} else {
				val.HeadComment, val.LineComment = d.HeadComment, d.LineComment
				dst.Content[j+1] = val
			}
			break
		}
		if !found {
			dst.Content = append(dst.Content, k, val)
		}
	}
}
