//go:build sync

package synctest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitPair makes a vault on machine a, pushes it to a bare repository and
// clones it on machine b, the way a person sets up a second machine.
func gitPair(t *testing.T) (a, b *machine) {
	t.Helper()
	root := t.TempDir()
	origin := filepath.Join(root, "origin.git")
	a = newMachine(t, "a", filepath.Join(root, "a", "vault"))
	b = newMachine(t, "b", filepath.Join(root, "b", "vault"))
	a.runIn(root, nil, "git", "init", "-q", "--bare", "-b", "main", origin)
	os.MkdirAll(filepath.Dir(a.vault), 0o755)
	os.MkdirAll(filepath.Dir(b.vault), 0o755)
	a.runIn(filepath.Dir(a.vault), nil, nexus(t), "init", a.vault)
	a.nx("agent", "add", "lyra", "--role", "deploys")
	a.nx("agent", "add", "ella", "--role", "reviews")
	a.nx("--agent", "lyra", "memory", "add", "base: the staging host is stg-1")
	a.git("init", "-q", "-b", "main")
	a.git("add", "-A")
	a.git("commit", "-q", "-m", "a new vault")
	a.git("remote", "add", "origin", origin)
	a.git("push", "-q", "-u", "origin", "main")
	b.runIn(filepath.Dir(b.vault), nil, "git", "clone", "-q", origin, b.vault)
	// A clone has no keys, state or index: they were never committed.
	for _, p := range []string{".nexus/keys", ".nexus/state", ".nexus/index"} {
		if out := a.git("ls-files", p); out != "" {
			t.Fatalf("%s was committed:\n%s", p, out)
		}
		if b.exists(p + "/lyra.key") {
			t.Fatalf("%s travelled to the clone", p)
		}
	}
	b.runIn(filepath.Dir(b.vault), nil, nexus(t), "init", b.vault) // the second machine's own folders
	if out := b.git("status", "--porcelain"); out != "" {
		t.Fatalf("init on the clone changed tracked files:\n%s", out)
	}
	return a, b
}

// TestGitTwoMachines: two copies kept in step by git, a person's edits on
// one, an agent's on the other, merged each way a person resolves a
// conflict. Afterwards both copies are identical, no marker or conflict
// copy is left, every entry the chosen resolution keeps is there once, and
// a review decided in Obsidian on one machine is carried out once.
func TestGitTwoMachines(t *testing.T) {
	const (
		agentEntry  = "A: the API listens on port 8443"
		personEntry = "B: Ann prefers answers in Korean first"
		baseEntry   = "base: the staging host is stg-1"
	)
	resolutions := []struct {
		name    string
		resolve func(a *machine, path string)
		want    []string // MEMORY.md entries afterwards
		// glued: git's union (and a person deleting the marker lines)
		// keeps every line but cannot know where one entry ends: two
		// entries added at the same place become one entry of two lines.
		// Every line is kept, once.
		glued bool
		// conflictItem: the IDENTITY.md conflict is filed for a person.
		conflictItem bool
	}{
		{"ours", func(a *machine, p string) { a.git("checkout", "--ours", "--", p) },
			[]string{baseEntry, agentEntry}, false, false},
		{"theirs", func(a *machine, p string) { a.git("checkout", "--theirs", "--", p) },
			[]string{baseEntry, personEntry}, false, false},
		{"union", func(a *machine, p string) {
			base := a.git("show", ":1:"+p)
			ours := a.git("show", ":2:"+p)
			theirs := a.git("show", ":3:"+p)
			dir := a.t.TempDir()
			for n, s := range map[string]string{"base": base, "ours": ours, "theirs": theirs} {
				os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644)
			}
			out, _ := a.gitCode("merge-file", "-p", "--union", filepath.Join(dir, "ours"), filepath.Join(dir, "base"), filepath.Join(dir, "theirs"))
			a.write(p, out)
		}, []string{baseEntry, agentEntry, personEntry}, true, false},
		{"both, markers removed by hand", func(a *machine, p string) {
			var keep []string
			for _, l := range strings.SplitAfter(a.read(p), "\n") {
				if strings.HasPrefix(l, "<<<<<<<") || strings.HasPrefix(l, "=======") || strings.HasPrefix(l, ">>>>>>>") {
					continue
				}
				keep = append(keep, l)
			}
			a.write(p, strings.Join(keep, ""))
		}, []string{baseEntry, agentEntry, personEntry}, true, false},
		{"markers committed as they are", func(a *machine, p string) {}, []string{baseEntry, agentEntry, personEntry}, false, true},
	}
	for _, res := range resolutions {
		t.Run(res.name, func(t *testing.T) {
			a, b := gitPair(t)
			// A proposal both machines see.
			var staged struct {
				ID string `json:"id"`
			}
			out := a.nx("--agent", "ella", "--json", "retain", "--type", "project", "Deploys happen on Tuesdays")
			if err := json.Unmarshal([]byte(out), &staged); err != nil || staged.ID == "" {
				t.Fatalf("retain: %v\n%s", err, out)
			}
			a.git("add", "-A")
			a.git("commit", "-q", "-m", "ella proposes a fact")
			a.git("push", "-q")
			b.git("pull", "-q", "--no-rebase")

			// Machine a: an agent writes memory and a person edits
			// ella's identity.
			a.nx("--agent", "lyra", "memory", "add", agentEntry)
			idPath := "agents/ella/IDENTITY.md"
			a.write(idPath, strings.Replace(a.read(idPath), "## Priorities\n(none yet)", "## Priorities\n- keep reviews short", 1))
			a.git("add", "-A")
			a.git("commit", "-q", "-m", "a: lyra learns the port")

			// Machine b, in Obsidian: a person adds to lyra's memory,
			// approves the proposal, edits ella's identity differently.
			memPath := "agents/lyra/MEMORY.md"
			b.write(memPath, b.read(memPath)+"\n§\n"+personEntry)
			pending := "review/pending/" + staged.ID + ".md"
			b.write(pending, strings.Replace(b.read(pending), "status: pending", "status: approved", 1))
			b.write(idPath, strings.Replace(b.read(idPath), "## Priorities\n(none yet)", "## Priorities\n- never merge on Fridays", 1))
			b.git("add", "-A")
			b.git("commit", "-q", "-m", "b: a person's edits")
			b.git("push", "-q")

			// a pulls: MEMORY.md and IDENTITY.md conflict.
			if _, code := a.gitCode("pull", "-q", "--no-rebase"); code == 0 {
				t.Fatal("the pull merged without a conflict; the test premise is wrong")
			}
			res.resolve(a, memPath)
			if res.name == "markers committed as they are" {
				// identity too, as it is
			} else {
				res.resolve(a, idPath)
			}
			a.git("add", "-A")
			a.git("commit", "-q", "-m", "merge ("+res.name+")")

			// Nexus on a: what a serve/watch does within seconds.
			a.nxCode("doctor", "--fix") // its checks are asserted below
			a.git("add", "-A")
			a.git("commit", "-q", "--allow-empty", "-m", "nexus on a")
			a.git("push", "-q")
			b.git("pull", "-q", "--no-rebase")
			b.nxCode("doctor", "--fix")
			if out := b.git("status", "--porcelain"); out != "" {
				t.Errorf("nexus on b changed files after the pull (the machines would diverge):\n%s", out)
			}

			for _, m := range []*machine{a, b} {
				if left := m.leftovers(); len(left) > 0 {
					t.Errorf("%s: conflict copies or markers left: %v", m.name, left)
				}
				if f := m.doctorFindings("conflicts", "ignore-rules", "review", "config"); len(f) > 0 {
					// A conflict filed for a person is a note, expected
					// only when the markers were committed.
					var unexpected []string
					for _, x := range f {
						if !(res.conflictItem && strings.Contains(x, "conflicts note:")) {
							unexpected = append(unexpected, x)
						}
					}
					if len(unexpected) > 0 {
						t.Errorf("%s: doctor: %q", m.name, unexpected)
					}
				}
				got := m.memoryEntries("lyra")
				if res.glued {
					got = strings.Split(strings.Join(got, "\n"), "\n")
				}
				if !slices.Equal(got, res.want) {
					t.Errorf("%s: MEMORY.md entries %q, want %q", m.name, got, res.want)
				}
				// The approval was carried out once: the fact exists, one
				// file, and the item is archived.
				facts, _ := filepath.Glob(m.path("agents/ella/memory/deploys-happen-on-tuesdays*.md"))
				if len(facts) != 1 || m.exists(pending) || !m.exists("review/archive/"+staged.ID+".md") {
					t.Errorf("%s: approval carried out as %v facts, pending there: %v", m.name, facts, m.exists(pending))
				}
				items := m.pendingItems()
				n := 0
				for _, kind := range items {
					if strings.HasPrefix(kind, "conflict:"+idPath) {
						n++
					}
				}
				if (n == 1) != res.conflictItem {
					t.Errorf("%s: %d conflict items for %s (%v), want one: %v", m.name, n, idPath, items, res.conflictItem)
				}
			}
			if d := diffTrees(a.tree(), b.tree()); d != "" {
				t.Errorf("the two copies differ:\n%s", d)
			}
		})
	}
}
