package doctor

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

var t0 = time.Date(2026, 1, 15, 2, 0, 0, 0, time.UTC)

// mustVault makes a vault with agents lyra and ella.
func mustVault(tb testing.TB) *vault.Vault {
	tb.Helper()
	v, _, err := vault.Init(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	if err := v.SetDevice("box"); err != nil {
		tb.Fatal(err)
	}
	for _, n := range []string{"lyra", "ella"} {
		if _, err := agents.Add(v, n, n+" role", t0); err != nil {
			tb.Fatal(err)
		}
	}
	return v
}

func mustRun(tb testing.TB, dir string) *Report {
	tb.Helper()
	rep, err := Run(context.Background(), dir, Options{LockWait: 20 * time.Millisecond})
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}

// findingsOf returns the findings of one check.
func findingsOf(rep *Report, check string) []Finding {
	var out []Finding
	for _, f := range rep.Findings() {
		if f.Check == check {
			out = append(out, f)
		}
	}
	return out
}

func TestHealthyVault(t *testing.T) {
	v := mustVault(t)
	rep := mustRun(t, v.Root())
	if !rep.OK || len(rep.Findings()) != 0 {
		t.Fatalf("fresh vault has findings: %+v", rep.Findings())
	}
	if len(rep.Results) != len(checks) {
		t.Errorf("got %d results, want one per check (%d)", len(rep.Results), len(checks))
	}
	for _, r := range rep.Results {
		if r.Summary == "" {
			t.Errorf("check %s has no summary", r.Check)
		}
		if strings.Contains(r.Summary, "(s)") {
			t.Errorf("check %s: %q counts with \"(s)\"; say \"1 agent\", \"2 agents\"", r.Check, r.Summary)
		}
	}
}

// TestSummariesCountInWords: one of a thing is singular, in every summary
// that counts (the healthy vault has two agents and two keys).
func TestSummariesCountInWords(t *testing.T) {
	v, _, err := vault.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agents.Add(v, "lyra", "ops", t0); err != nil {
		t.Fatal(err)
	}
	rep := mustRun(t, v.Root())
	got := map[string]string{}
	for _, r := range rep.Results {
		got[r.Check] = r.Summary
	}
	for check, want := range map[string]string{
		"key-pair": "1 agent: private keys match IDENTITY.md",
		"review":   "0 items pending review",
		"config":   "parses; no agent has settings of its own",
	} {
		if got[check] != want {
			t.Errorf("%s: %q, want %q", check, got[check], want)
		}
	}
	if runtime.GOOS != "windows" && got["key-mode"] != "1 key file, mode 0600 expected" {
		t.Errorf("key-mode: %q", got["key-mode"])
	}
}

// TestHandTypedLogText: a person's note in the log is fine.
func TestHandTypedLogText(t *testing.T) {
	v := mustVault(t)
	l, err := livelog.Open(v, livelog.Options{Now: func() time.Time { return t0 }})
	must(t, err)
	_, err = l.Append("ella", livelog.Entry{Summary: "Read the handoff"})
	must(t, err)
	seg := v.MustPath(livelog.FeedPath("ella@box", t0))
	data, err := os.ReadFile(seg)
	must(t, err)
	must(t, vault.WriteFile(seg, append(data, "\nNote from Sam: the staging DB moves on Friday.\n"...), 0o644))
	rep := mustRun(t, v.Root())
	if !rep.OK {
		t.Fatalf("hand-typed text reported: %+v", rep.Findings())
	}
}

func TestNotAVault(t *testing.T) {
	_, err := Run(context.Background(), t.TempDir(), Options{})
	if err == nil || !strings.Contains(err.Error(), "not a Nexus vault") {
		t.Fatalf("err = %v, want not a vault", err)
	}
}

// TestPlantedProblems plants one problem per case and checks that doctor
// finds it, on the right path, with the right fix.
func TestPlantedProblems(t *testing.T) {
	type plant func(t *testing.T, v *vault.Vault) (cleanup func())
	cases := []struct {
		name      string
		unixOnly  bool
		plant     plant
		check     string
		path      string
		fix       string // substring of the fix
		note      bool   // a note (exit 0), not a problem
		unchecked bool   // the check could not run (exit 3)
	}{
		{
			name:     "key mode",
			unixOnly: true,
			plant: func(t *testing.T, v *vault.Vault) func() {
				must(t, os.Chmod(v.MustPath(identity.KeyPath("lyra")), 0o644))
				return nil
			},
			check: "key-mode", path: ".nexus/keys/lyra.key", fix: "chmod 600 ",
		},
		{
			name: "swapped key",
			plant: func(t *testing.T, v *vault.Vault) func() {
				ella, err := os.ReadFile(v.MustPath(identity.KeyPath("ella")))
				must(t, err)
				must(t, vault.WriteFile(v.MustPath(identity.KeyPath("lyra")), ella, 0o600))
				return nil
			},
			check: "key-pair", path: ".nexus/keys/lyra.key", fix: "restore the agent's own key",
		},
		{
			name: "missing key",
			plant: func(t *testing.T, v *vault.Vault) func() {
				must(t, os.Remove(v.MustPath(identity.KeyPath("ella"))))
				return nil
			},
			check: "key-pair", path: ".nexus/keys/ella.key", fix: "cp BACKUP/.nexus/keys/ella.key",
		},
		{
			name: "orphan key",
			plant: func(t *testing.T, v *vault.Vault) func() {
				must(t, os.RemoveAll(v.MustPath("agents/ella")))
				return nil
			},
			check: "key-pair", path: ".nexus/keys/ella.key", fix: "mv ",
		},
		{
			name: "config does not parse",
			plant: func(t *testing.T, v *vault.Vault) func() {
				must(t, vault.WriteFile(v.MustPath(vault.ConfigFile), []byte("memory_char_limit: [oops\n"), 0o644))
				return nil
			},
			check: "config", path: ".nexus/config.yaml", fix: "EDITOR",
		},
		{
			name: "config wrong shape",
			plant: func(t *testing.T, v *vault.Vault) func() {
				must(t, vault.WriteFile(v.MustPath(vault.ConfigFile), []byte("memory_char_limit: lots\n"), 0o644))
				return nil
			},
			check: "config", path: ".nexus/config.yaml", fix: "EDITOR",
		},
		{
			name: "negative limit",
			plant: func(t *testing.T, v *vault.Vault) func() {
				must(t, vault.WriteFile(v.MustPath(vault.ConfigFile), []byte("user_char_limit: -5\n"), 0o644))
				return nil
			},
			check: "config", path: ".nexus/config.yaml", fix: "user_char_limit",
		},
		{
			name: "misspelt setting",
			plant: func(t *testing.T, v *vault.Vault) func() {
				must(t, vault.WriteFile(v.MustPath(vault.ConfigFile), []byte("memory_char_limt: 3000\n"), 0o644))
				return nil
			},
			check: "config", path: ".nexus/config.yaml", fix: "sed -i.bak 's/^memory_char_limt:/memory_char_limit:/'",
		},
		{
			name: "lock_timeout not a duration",
			plant: func(t *testing.T, v *vault.Vault) func() {
				must(t, vault.WriteFile(v.MustPath(vault.ConfigFile), []byte("lock_timeout: soon\n"), 0o644))
				return nil
			},
			check: "config", path: ".nexus/config.yaml", fix: "lock_timeout",
		},
		{
			name: "bad token hash",
			plant: func(t *testing.T, v *vault.Vault) func() {
				must(t, vault.WriteFile(v.MustPath(vault.ConfigFile), []byte("agents:\n  lyra:\n    token_sha256: nothex\n"), 0o644))
				return nil
			},
			check: "config", path: ".nexus/config.yaml", fix: "agent token lyra --rotate",
		},
		{
			name: "stale lock",
			plant: func(t *testing.T, v *vault.Vault) func() {
				// A handle of our own conflicts with doctor's, as another
				// process's would.
				fl := flock.New(v.LockPath("livelog"))
				ok, err := fl.TryLock()
				must(t, err)
				if !ok {
					t.Fatal("could not take the lock")
				}
				return func() { fl.Unlock(); fl.Close() }
			},
			check: "locks", path: ".nexus/state/locks/livelog.lock", fix: "lsof",
		},
		{
			name: "tampered log line",
			plant: func(t *testing.T, v *vault.Vault) func() {
				l, err := livelog.Open(v, livelog.Options{Now: func() time.Time { return t0 }})
				must(t, err)
				for _, s := range []string{"Fixed the login timeout", "Rotated the staging keys"} {
					_, err := l.Append("lyra", livelog.Entry{Channel: "deploy", Kind: "shipped", Summary: s})
					must(t, err)
				}
				seg := v.MustPath(livelog.FeedPath("lyra@box", t0))
				data, err := os.ReadFile(seg)
				must(t, err)
				tampered := strings.Replace(string(data), "login timeout", "logout timeout", 1)
				if tampered == string(data) {
					t.Fatal("nothing to tamper with")
				}
				must(t, vault.WriteFile(seg, []byte(tampered), 0o644))
				return nil
			},
			check: "log", path: "log/live/2026-01/lyra@box.md", fix: "log verify",
		},
		{
			name: "stale index",
			plant: func(t *testing.T, v *vault.Vault) func() {
				ix, err := index.Open(v, index.Options{NoServe: true})
				must(t, err)
				must(t, ix.Sync(context.Background()))
				must(t, ix.Close())
				must(t, vault.WriteFile(v.MustPath("projects/launch.md"), []byte("# Launch\n\nPlan for the launch.\n"), 0o644))
				return nil
			},
			check: "index", path: ".nexus/index", fix: "watch", note: true,
		},
		{
			// A holder stopped (Ctrl-Z, kill -STOP) or hung holds the
			// index and answers nobody: the index was not checked (exit
			// 3), and rebuilding would not help.
			name: "index held by a process that does not answer",
			plant: func(t *testing.T, v *vault.Vault) func() {
				ix, err := index.Open(v, index.Options{NoServe: true}) // holds the lock, answers nobody
				must(t, err)
				must(t, ix.Sync(context.Background()))
				return func() { ix.Close() }
			},
			check: "index", path: ".nexus/index", fix: "kill -CONT", unchecked: true,
		},
		{
			// A sync tool wrote a same-size edit and set the mtime back:
			// the inode's change time still moved.
			// (Windows gives no change time: size and mtime are the rule
			// there, docs/search.md.)
			name:     "stale index, same-size edit with the mtime restored",
			unixOnly: true,
			plant: func(t *testing.T, v *vault.Vault) func() {
				p := v.MustPath("projects/same.md")
				must(t, os.WriteFile(p, []byte("# Same\n\nkumquat plan\n"), 0o644))
				ix, err := index.Open(v, index.Options{NoServe: true})
				must(t, err)
				must(t, ix.Sync(context.Background()))
				must(t, ix.Close())
				st, err := os.Stat(p)
				must(t, err)
				time.Sleep(10 * time.Millisecond)
				must(t, os.WriteFile(p, []byte("# Same\n\ntangelo plan\n"), 0o644))
				must(t, os.Chtimes(p, st.ModTime(), st.ModTime()))
				return nil
			},
			check: "index", path: ".nexus/index", fix: "watch", note: true,
		},
		{
			name: "review waiting over a week",
			plant: func(t *testing.T, v *vault.Vault) func() {
				in := agents.FactInput{Name: "Prefers Korean", Description: "The user reads Korean first", Type: "user", Body: "Answer in Korean, then English."}
				_, err := retention.Retain(v, "ella", in, retention.Provenance{}, time.Now().Add(-8*24*time.Hour))
				must(t, err)
				// A fresh one is fine.
				in.Name = "Works late"
				_, err = retention.Retain(v, "ella", in, retention.Provenance{}, time.Now().Add(-time.Hour))
				must(t, err)
				return nil
			},
			check: "review", path: "review/pending/", fix: "review approve ",
		},
		{
			name: "approved in Obsidian, not carried out",
			plant: func(t *testing.T, v *vault.Vault) func() {
				in := agents.FactInput{Name: "Works late", Description: "The user works late", Type: "user", Body: "Often online after 22:00."}
				it, err := retention.Retain(v, "ella", in, retention.Provenance{}, time.Now())
				must(t, err)
				p := v.MustPath(it.Path)
				data, err := os.ReadFile(p)
				must(t, err)
				data, err = vault.SetProperty(data, "status", "approved")
				must(t, err)
				must(t, vault.WriteFile(p, data, 0o644))
				return nil
			},
			check: "review", path: "review/pending/", fix: "review list",
		},
		{
			name: "unreadable review item",
			plant: func(t *testing.T, v *vault.Vault) func() {
				must(t, vault.WriteFile(v.MustPath("review/pending/broken.md"), []byte("---\nkind: [\n---\nbody\n"), 0o644))
				return nil
			},
			check: "review", path: "review/pending/broken.md", fix: "repair its frontmatter",
		},
		{
			name: "leftover temp file",
			plant: func(t *testing.T, v *vault.Vault) func() {
				p := v.MustPath("agents/lyra/.MEMORY.md.tmp-12345")
				must(t, os.WriteFile(p, []byte("half"), 0o644))
				old := time.Now().Add(-time.Hour)
				must(t, os.Chtimes(p, old, old))
				// Fresh ones are writes in progress, and .obsidian is not ours.
				must(t, os.WriteFile(v.MustPath("agents/ella/.USER.md.tmp-1"), nil, 0o644))
				must(t, os.MkdirAll(v.MustPath(".obsidian"), 0o755))
				q := filepath.Join(v.Root(), ".obsidian", ".app.json.tmp-1")
				must(t, os.WriteFile(q, nil, 0o644))
				must(t, os.Chtimes(q, old, old))
				return nil
			},
			check: "temp-files", path: "agents/lyra/.MEMORY.md.tmp-12345", fix: strings.SplitN(removeCmd("x"), "x", 2)[0],
		},
		{
			name: "binary .md",
			plant: func(t *testing.T, v *vault.Vault) func() {
				must(t, os.WriteFile(v.MustPath("projects/diagram.md"), []byte("PK\x03\x04\x00\x00binary"), 0o644))
				return nil
			},
			check: "odd-files", path: "projects/diagram.md", fix: "rename it away from .md", note: true,
		},
		{
			name: "byte-order mark before frontmatter",
			plant: func(t *testing.T, v *vault.Vault) func() {
				must(t, os.WriteFile(v.MustPath("projects/bom.md"), []byte("\uFEFF---\ntags: [x]\n---\n# 배포\n"), 0o644))
				return nil
			},
			check: "odd-files", path: "projects/bom.md", fix: "without a byte-order mark", note: true,
		},
		{
			name: "not UTF-8 (EUC-KR)",
			plant: func(t *testing.T, v *vault.Vault) func() {
				// 배포 in EUC-KR.
				must(t, os.WriteFile(v.MustPath("projects/euckr.md"), []byte("# \xb9\xe8\xc6\xf7\n"), 0o644))
				return nil
			},
			check: "odd-files", path: "projects/euckr.md", fix: "iconv", note: true,
		},
		{
			name: "decomposed (NFD) name",
			plant: func(t *testing.T, v *vault.Vault) func() {
				// 배포 decomposed, as macOS may store it.
				must(t, os.WriteFile(filepath.Join(v.Root(), "projects", "\u1107\u1162\u1111\u1169.md"), []byte("# plan\n"), 0o644))
				return nil
			},
			check: "odd-files", path: "projects/\u1107\u1162\u1111\u1169.md", fix: "mv ", note: true, unixOnly: true,
		},
		{
			name: "symlink out of the vault",
			plant: func(t *testing.T, v *vault.Vault) func() {
				outside := filepath.Join(t.TempDir(), "secret.md")
				must(t, os.WriteFile(outside, []byte("# elsewhere\n"), 0o644))
				must(t, os.Symlink(outside, v.MustPath("projects/elsewhere.md")))
				// One pointing inside is fine.
				must(t, os.WriteFile(v.MustPath("projects/real.md"), []byte("# real\n"), 0o644))
				must(t, os.Symlink(v.MustPath("projects/real.md"), v.MustPath("projects/alias.md")))
				return nil
			},
			check: "odd-files", path: "projects/elsewhere.md", fix: "cp ", note: true, unixOnly: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.unixOnly && runtime.GOOS == "windows" {
				t.Skip("file modes are not checked on Windows")
			}
			v := mustVault(t)
			must(t, os.MkdirAll(v.MustPath("projects"), 0o755)) // init makes only .nexus/
			if cleanup := tc.plant(t, v); cleanup != nil {
				defer cleanup()
			}
			rep := mustRun(t, v.Root())
			all := rep.Findings()
			if len(all) != 1 {
				t.Fatalf("want exactly one finding, got %+v", all)
			}
			f := all[0]
			if tc.note {
				if !rep.OK || rep.Notes != 1 || rep.Problems != 0 || f.Severity != SeverityNote {
					t.Fatalf("want one note and an OK report, got OK=%v problems=%d notes=%d %+v", rep.OK, rep.Problems, rep.Notes, f)
				}
			} else if rep.OK || rep.Problems != 1 || rep.Notes != 0 || f.Severity != SeverityProblem {
				t.Fatalf("want one problem and a failed report, got OK=%v problems=%d notes=%d %+v", rep.OK, rep.Problems, rep.Notes, f)
			}
			if f.Check != tc.check || !(f.Path == tc.path || strings.HasSuffix(tc.path, "/") && strings.HasPrefix(f.Path, tc.path)) {
				t.Errorf("finding %s %s, want %s %s", f.Check, f.Path, tc.check, tc.path)
			}
			if f.Unchecked != tc.unchecked {
				t.Errorf("finding %+v: unchecked %v, want %v", f, f.Unchecked, tc.unchecked)
			}
			if !strings.Contains(f.Fix, tc.fix) || f.Problem == "" {
				t.Errorf("finding %+v: fix should contain %q", f, tc.fix)
			}
		})
	}
}

// TestLockReleasedWhileWatched: a lock that is let go during the watch was
// ordinary work, not a problem.
func TestLockReleasedWhileWatched(t *testing.T) {
	v := mustVault(t)
	fl := flock.New(v.LockPath("livelog"))
	ok, err := fl.TryLock()
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	released := make(chan struct{})
	rep := make(chan *Report)
	go func() {
		r, err := Run(context.Background(), v.Root(), Options{LockWait: time.Hour})
		if err != nil {
			t.Error(err)
		}
		rep <- r
	}()
	// Release once doctor has seen it held: it then must not report it.
	go func() {
		defer close(released)
		fl.Unlock()
		fl.Close()
	}()
	<-released
	r := <-rep
	if r == nil {
		return
	}
	if fs := findingsOf(r, "locks"); len(fs) != 0 {
		t.Errorf("released lock reported: %+v", fs)
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/vault":      "/tmp/vault",
		"/tmp/my vault":   "'/tmp/my vault'",
		"/tmp/it's":       `'/tmp/it'\''s'`,
		"":                "''",
		"/tmp/볼트":         "'/tmp/볼트'",
		"--vault=/x/y.md": "--vault=/x/y.md",
		"$(rm -rf /)":     "'$(rm -rf /)'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsTempName(t *testing.T) {
	for name, want := range map[string]bool{
		".MEMORY.md.tmp-123": true,
		".config.yaml.tmp-9": true,
		"MEMORY.md":          false,
		"notes.tmp-1.md":     false,
		".obsidian":          false,
	} {
		if got := IsTempName(name); got != want {
			t.Errorf("IsTempName(%q) = %v", name, got)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestUnfinishedReviewDecision: an intent a killed process left is
// reported until a command finishes it.
func TestUnfinishedReviewDecision(t *testing.T) {
	v := mustVault(t)
	it, err := retention.Retain(v, "lyra", agents.FactInput{Name: "deploy day", Description: "when", Type: agents.FactProject, Body: "Tuesdays."}, retention.Provenance{}, t0)
	if err != nil {
		t.Fatal(err)
	}
	dir := v.MustPath(retention.IntentsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	intent := `{"op":"approve","id":"` + it.ID + `","by":"ada","now":"2026-01-15T02:00:00Z","started":"2026-01-15T02:00:00Z","pid":4242}`
	if err := os.WriteFile(filepath.Join(dir, "approve-"+it.ID+".json"), []byte(intent), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []Finding
	for _, f := range mustRun(t, v.Root()).Findings() {
		if strings.Contains(f.Problem, "left unfinished") {
			got = append(got, f)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0].Problem, "approve of "+it.ID) || !strings.Contains(got[0].Problem, "process 4242") {
		t.Fatalf("findings: %+v", got)
	}
	if _, err := retention.Recover(v); err != nil {
		t.Fatal(err)
	}
	for _, f := range mustRun(t, v.Root()).Findings() {
		if strings.Contains(f.Problem, "left unfinished") {
			t.Errorf("after one command: %+v", f)
		}
	}
}
