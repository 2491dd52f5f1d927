//go:build sync

package synctest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	nexusBin  string
	buildErr  error
)

// nexus returns the path of the nexus binary, built once per test run.
func nexus(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "synctest-bin-")
		if err != nil {
			buildErr = err
			return
		}
		nexusBin = filepath.Join(dir, "nexus")
		if runtime.GOOS == "windows" {
			nexusBin += ".exe"
		}
		out, err := exec.Command("go", "build", "-o", nexusBin, "github.com/nexus-memory/nexus/cmd/nexus").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("build nexus: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return nexusBin
}

// commandTimeout bounds every command a test runs.
const commandTimeout = 2 * time.Minute

// machine is one copy of the vault, as one computer holds it.
type machine struct {
	t      *testing.T
	name   string // "a", "b"
	vault  string // the vault folder
	device string // the device name Nexus uses there
}

func newMachine(t *testing.T, name, vault string) *machine {
	return &machine{t: t, name: name, vault: vault, device: "dev-" + name}
}

// env is the environment of commands run on the machine: its own HOME, so
// that nothing of the person running the tests is read.
func (m *machine) env() []string {
	home := filepath.Join(filepath.Dir(m.vault), "home-"+m.name)
	os.MkdirAll(home, 0o755)
	return append(os.Environ(), "HOME="+home, "NEXUS_VAULT=", "NEXUS_AGENT=", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=person "+m.name, "GIT_AUTHOR_EMAIL="+m.name+"@example.org",
		"GIT_COMMITTER_NAME=person "+m.name, "GIT_COMMITTER_EMAIL="+m.name+"@example.org")
}

// run runs a command in dir and returns its stdout; it fails the test on a
// non-zero exit unless ok accepts the code.
func (m *machine) runIn(dir string, ok func(int) bool, name string, args ...string) string {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = m.env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, isExit := err.(*exec.ExitError)
		if !isExit {
			m.t.Fatalf("%s: %s %s: %v", m.name, name, strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	if code != 0 && (ok == nil || !ok(code)) {
		m.t.Fatalf("%s: %s %s: exit %d\n%s%s", m.name, filepath.Base(name), strings.Join(args, " "), code, out.String(), errb.String())
	}
	return out.String()
}

// nx runs nexus on the machine's vault.
func (m *machine) nx(args ...string) string {
	m.t.Helper()
	return m.runIn(m.vault, nil, nexus(m.t), append([]string{"--vault", m.vault}, args...)...)
}

// nxCode runs nexus and returns its stdout and exit code.
func (m *machine) nxCode(args ...string) (string, int) {
	m.t.Helper()
	code := 0
	out := m.runIn(m.vault, func(c int) bool { code = c; return true }, nexus(m.t), append([]string{"--vault", m.vault}, args...)...)
	return out, code
}

// git runs git in the machine's vault.
func (m *machine) git(args ...string) string {
	m.t.Helper()
	return m.runIn(m.vault, nil, "git", args...)
}

// gitCode runs git and returns stdout and the exit code.
func (m *machine) gitCode(args ...string) (string, int) {
	m.t.Helper()
	code := 0
	out := m.runIn(m.vault, func(c int) bool { code = c; return true }, "git", args...)
	return out, code
}

func (m *machine) path(rel string) string { return filepath.Join(m.vault, filepath.FromSlash(rel)) }

func (m *machine) read(rel string) string {
	m.t.Helper()
	data, err := os.ReadFile(m.path(rel))
	if err != nil {
		m.t.Fatalf("%s: %v", m.name, err)
	}
	return string(data)
}

func (m *machine) write(rel, data string) {
	m.t.Helper()
	p := m.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		m.t.Fatal(err)
	}
	// In place, the way Obsidian saves.
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		m.t.Fatal(err)
	}
}

func (m *machine) exists(rel string) bool {
	_, err := os.Lstat(m.path(rel))
	return err == nil
}

// memoryEntries returns an agent's MEMORY.md entries as nexus shows them.
func (m *machine) memoryEntries(agent string) []string {
	m.t.Helper()
	var res struct {
		Entries []string `json:"entries"`
	}
	out := m.nx("--agent", agent, "--json", "memory", "show")
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		m.t.Fatalf("%s: memory show: %v\n%s", m.name, err, out)
	}
	return res.Entries
}

// doctorFindings runs doctor and returns its findings of the given
// checks.
func (m *machine) doctorFindings(checks ...string) []string {
	m.t.Helper()
	out, _ := m.nxCode("--json", "doctor")
	var rep struct {
		Results []struct {
			Check    string `json:"check"`
			Findings []struct {
				Severity, Path, Problem string
			} `json:"findings"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		m.t.Fatalf("%s: doctor --json: %v\n%s", m.name, err, out)
	}
	var found []string
	for _, r := range rep.Results {
		for _, c := range checks {
			if r.Check != c {
				continue
			}
			for _, f := range r.Findings {
				found = append(found, fmt.Sprintf("%s %s: %s: %s", r.Check, f.Severity, f.Path, f.Problem))
			}
		}
	}
	return found
}

// pendingItems lists the ids and kinds of the pending review items.
func (m *machine) pendingItems() map[string]string {
	m.t.Helper()
	out := m.nx("--json", "review", "list")
	var items []struct {
		ID, Kind, Status, Target string
	}
	if err := json.Unmarshal([]byte(out), &items); err != nil {
		var wrapped struct {
			Items []struct{ ID, Kind, Status, Target string } `json:"items"`
		}
		if err2 := json.Unmarshal([]byte(out), &wrapped); err2 != nil {
			m.t.Fatalf("%s: review list --json: %v\n%s", m.name, err, out)
		}
		for _, it := range wrapped.Items {
			items = append(items, struct{ ID, Kind, Status, Target string }(it))
		}
	}
	got := map[string]string{}
	for _, it := range items {
		got[it.ID] = it.Kind + ":" + it.Target
	}
	return got
}

// conflictCopies lists files outside review/archive/conflicts/ whose names
// sync tools give to conflict copies, and files holding git conflict
// markers.
func (m *machine) leftovers() []string {
	m.t.Helper()
	var out []string
	filepath.WalkDir(m.vault, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(m.vault, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" || rel == "review/archive/conflicts" || strings.HasPrefix(d.Name(), ".st") {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if strings.Contains(name, ".sync-conflict-") || strings.Contains(name, "conflicted copy") || strings.HasSuffix(name, ".orig") {
			out = append(out, rel)
			return nil
		}
		if strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".yaml") {
			data, _ := os.ReadFile(p)
			if bytes.Contains(data, []byte("\n<<<<<<< ")) || bytes.HasPrefix(data, []byte("<<<<<<< ")) {
				out = append(out, rel+" (markers)")
			}
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// tree returns the vault's synced files and their bytes: everything but
// what is machine-local and the engines' own files.
func (m *machine) tree() map[string]string {
	m.t.Helper()
	files := map[string]string{}
	filepath.WalkDir(m.vault, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(m.vault, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch rel {
			case ".git", ".nexus/keys", ".nexus/state", ".nexus/index", ".stfolder", ".stversions":
				return filepath.SkipDir
			}
			return nil
		}
		if rel == ".stignore" || rel == "log/timeline.local.md" || strings.Contains(d.Name(), ".tmp-") || strings.HasPrefix(d.Name(), ".syncthing.") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err == nil {
			files[rel] = string(data)
		}
		return nil
	})
	return files
}

// diffTrees describes how two trees differ, or returns "".
func diffTrees(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		w, ok := b[k]
		switch {
		case !ok:
			out = append(out, "only on a: "+k)
		case v != w:
			out = append(out, "differs: "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "only on b: "+k)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
