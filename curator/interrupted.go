package curator

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// A pass that files proposals first takes a snapshot (reason
// [PassSnapshotReason] + pass id), then files the review items, then
// writes its diary, review/curator/PASS.md. A process killed between the
// items and the diary left proposals no diary names. The snapshot is the
// record that the pass began: the next pass (or [FinishInterrupted])
// writes the missing diary from the items the pass filed, and doctor names
// such a pass meanwhile.

// PassSnapshotReason starts the reason of the snapshot a pass takes
// before filing its proposals; the pass id follows.
const PassSnapshotReason = "before curator pass "

// testHookBeforeDiary runs after a pass filed its proposals, before it
// writes its diary; tests kill the process there.
var testHookBeforeDiary func()

// InterruptedPass is a pass that filed proposals and wrote no diary.
type InterruptedPass struct {
	ID       string    `json:"id"`
	Time     time.Time `json:"time"`
	Snapshot string    `json:"snapshot"`
}

// Interrupted lists the passes whose snapshot is kept and whose diary is
// missing, oldest first.
func Interrupted(v *vault.Vault) ([]InterruptedPass, error) {
	snaps, err := retention.ListSnapshots(v)
	if err != nil {
		return nil, err
	}
	var out []InterruptedPass
	for _, s := range snaps {
		id, ok := strings.CutPrefix(s.Reason, PassSnapshotReason)
		if !ok || retention.CheckID(id) != nil {
			continue
		}
		_, err := os.Lstat(v.MustPath(vault.CuratorDir + "/" + id + ".md"))
		if err == nil {
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("look for the diary of pass %s: %w", id, err)
		}
		out = append(out, InterruptedPass{ID: id, Time: s.Created, Snapshot: s.ID})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

// FinishInterrupted writes the diary of every interrupted pass and
// returns their ids. It takes the curator lock.
func FinishInterrupted(v *vault.Vault) ([]string, error) {
	unlock, err := v.Lock("curator")
	if err != nil {
		return nil, err
	}
	defer unlock()
	return finishInterrupted(v)
}

// finishInterrupted is [FinishInterrupted] with the curator lock held.
func finishInterrupted(v *vault.Vault) ([]string, error) {
	passes, err := Interrupted(v)
	if err != nil || len(passes) == 0 {
		return nil, err
	}
	pending, err := retention.List(v, retention.Filter{})
	if err != nil {
		return nil, err
	}
	st, err := loadCuratorState(v, time.Now())
	if err != nil {
		return nil, err
	}
	var done []string
	for _, p := range passes {
		res := PassResult{ID: p.ID, Time: p.Time.UTC().Truncate(time.Second), Snapshot: p.Snapshot, Ran: true, Proposals: []Proposal{},
			Notes: []string{"This pass was interrupted after filing its proposals and before writing this note; Nexus wrote it later from the review items the pass filed (each item holds its evidence)."}}
		seen := map[string]bool{}
		add := func(it retention.Item) {
			if it.Provenance.Source != "curator" || it.Provenance.Session != p.ID || seen[it.ID] {
				return
			}
			seen[it.ID] = true
			res.Proposals = append(res.Proposals, Proposal{ID: it.ID, Kind: it.Kind, Agent: it.Agent, Summary: it.Name})
			if !slices.Contains(res.Agents, it.Agent) {
				res.Agents = append(res.Agents, it.Agent)
			}
		}
		for _, it := range pending {
			add(it)
		}
		// Items decided since: the snapshot lists the files the pass made.
		if s, err := retention.LoadSnapshot(v, p.Snapshot); err == nil {
			for _, f := range s.Files {
				if id, ok := strings.CutPrefix(f.Path, vault.ArchiveDir+"/"); ok {
					if it, err := retention.Get(v, strings.TrimSuffix(id, ".md")); err == nil {
						add(it)
					}
				}
			}
		}
		sort.Strings(res.Agents)
		if _, err := writeDiary(v, res); err != nil {
			return done, err
		}
		if res.Time.After(st.LastPass) {
			st.LastPass, st.LastID = res.Time, res.ID
		}
		done = append(done, p.ID)
	}
	return done, saveCuratorState(v, st)
}
