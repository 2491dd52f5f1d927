package agents

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nexus-memory/nexus/vault"
)

// SectionCurator is the prompt section that names a curator proposal
// waiting for a person when MEMORY.md or USER.md is past the curator's
// pressure threshold (docs/curation.md). It is empty otherwise.
const SectionCurator = "curator"

// WaitingSpill is a curator proposal to move entries of a bounded-memory
// file into fact files, waiting in review/pending/.
type WaitingSpill struct {
	ID      string `json:"id"`
	Target  Target `json:"target"`
	Summary string `json:"summary"`
	Path    string `json:"path"`
}

// WaitingSpills lists agent's pending curator spill proposals (kind:
// spill in review/pending/), by id. It reads only the frontmatter lines it
// needs.
func WaitingSpills(v *vault.Vault, agent string) []WaitingSpill {
	dir := v.MustPath(vault.PendingDir)
	des, err := vault.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []WaitingSpill
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() || !strings.HasSuffix(name, ".md") || strings.HasPrefix(name, ".") {
			continue
		}
		data, err := vault.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		fm, _, ok := vault.SplitFrontmatter(data)
		if !ok {
			continue
		}
		keys := map[string]string{}
		for _, line := range strings.Split(string(fm), "\n") {
			if line == "" || line[0] == ' ' {
				continue
			}
			if k, val, found := strings.Cut(strings.TrimRight(line, "\r"), ":"); found {
				keys[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(val), `"'`)
			}
		}
		if keys["kind"] != "spill" || keys["agent"] != agent || (keys["status"] != "" && keys["status"] != "pending") {
			continue
		}
		t := TargetMemory
		if keys["target"] == string(TargetUser) {
			t = TargetUser
		}
		id := strings.TrimSuffix(name, ".md")
		out = append(out, WaitingSpill{ID: id, Target: t, Summary: keys["name"], Path: vault.PendingDir + "/" + name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// CuratorNotice is the short line an agent gets (in its session start and
// in the memory tool's results) when its target file is at or past the
// curator's pressure threshold and a spill proposal for it waits for a
// person; "" otherwise.
func CuratorNotice(v *vault.Vault, agent string, t Target, chars, limit int) string {
	if limit <= 0 || chars*100 < limit*v.Config().Curator.PressurePercent() {
		return ""
	}
	for _, w := range WaitingSpills(v, agent) {
		if w.Target != t {
			continue
		}
		return fmt.Sprintf("Curator: %s is at %s; proposal %s (%s) waits for a person's review in %s. Until it is decided, keep new entries short.",
			t.File(), FormatUsage(chars, limit), w.ID, w.Summary, w.Path)
	}
	return ""
}

// curator renders the curator section: one notice line per file past the
// threshold with a proposal waiting.
func (r *promptRun) curator() (string, error) {
	var lines []string
	for _, t := range []Target{TargetMemory, TargetUser} {
		m, err := OpenMemory(r.v, r.agent, t)
		if err != nil {
			return "", err
		}
		entries, err := m.Entries()
		if err != nil {
			return "", err
		}
		if n := CuratorNotice(r.v, r.agent, t, CharCount(entries), m.Limit()); n != "" {
			lines = append(lines, n)
		}
	}
	return strings.Join(lines, "\n"), nil
}
