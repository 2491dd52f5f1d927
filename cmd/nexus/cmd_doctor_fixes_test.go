//go:build !lite && !windows

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// doctorFinding is one finding of 'doctor --json'.
type doctorFinding struct {
	Check    string `json:"check"`
	Severity string `json:"severity"`
	Path     string `json:"path"`
	Problem  string `json:"problem"`
	Fix      string `json:"fix"`
}

// fixVault is a vault for the fix tests, driven through the nexus binary
// on PATH, as a person follows doctor's fixes.
type fixVault struct {
	t   *testing.T
	bin string // the nexus binary, first on PATH in env
	dir string
	env []string
}

func newFixVault(t *testing.T) *fixVault {
	t.Helper()
	bin := buildBinary(t)
	fv := &fixVault{t: t, bin: bin, dir: t.TempDir()}
	fv.env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"NEXUS_VAULT=", "NEXUS_AGENT=", "NEXUS_REVIEWER=ada", "EDITOR=false", "VISUAL=")
	fv.mustRun("init", fv.dir)
	fv.mustRun("--vault", fv.dir, "agent", "add", "lyra")
	fv.mustRun("--vault", fv.dir, "--agent", "lyra", "log", "append", "deployed the apples service")
	return fv
}

// sh runs a command line through sh -c, as a person pastes it.
func (fv *fixVault) sh(line string) (int, string) {
	cmd := exec.Command("sh", "-c", line)
	cmd.Env = fv.env
	cmd.Dir = fv.dir
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		fv.t.Fatalf("sh -c %q: %v", line, err)
	}
	return 0, string(out)
}

// nexus runs the binary with args and returns its exit code, stdout and
// stderr.
func (fv *fixVault) nexus(args ...string) (int, string, string) {
	cmd := exec.Command(fv.bin, args...)
	cmd.Env = fv.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errb.String()
	}
	if err != nil {
		fv.t.Fatalf("nexus %v: %v", args, err)
	}
	return 0, out.String(), errb.String()
}

func (fv *fixVault) mustRun(args ...string) string {
	fv.t.Helper()
	code, out, errs := fv.nexus(args...)
	if code != 0 {
		fv.t.Fatalf("nexus %v: exit %d\n%s%s", args, code, out, errs)
	}
	return out
}

// doctor runs 'doctor --json' and returns its exit code and findings.
func (fv *fixVault) doctor() (int, []doctorFinding, string) {
	fv.t.Helper()
	code, out, errs := fv.nexus("--vault", fv.dir, "--json", "doctor")
	var rep struct {
		Results []struct {
			Findings []doctorFinding `json:"findings"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		fv.t.Fatalf("doctor --json: %v\n%s%s", err, out, errs)
	}
	var all []doctorFinding
	for _, r := range rep.Results {
		all = append(all, r.Findings...)
	}
	return code, all, out
}

func (fv *fixVault) path(rel string) string { return filepath.Join(fv.dir, filepath.FromSlash(rel)) }

func (fv *fixVault) write(rel, text string) {
	fv.t.Helper()
	p := fv.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		fv.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		fv.t.Fatal(err)
	}
}

func (fv *fixVault) feed() string {
	fv.t.Helper()
	m, _ := filepath.Glob(fv.path("log/live/*/lyra@*.md"))
	if len(m) != 1 {
		fv.t.Fatalf("feeds of lyra: %v", m)
	}
	return m[0]
}

func appendBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// TestDoctorFixesWork breaks a vault in one way per case, runs the fix
// doctor prints exactly as written (through sh -c, with this build's
// nexus first on PATH), and sees doctor find nothing of that check again,
// with exit 0 (docs/operations.md promises the command that fixes each
// problem).
func TestDoctorFixesWork(t *testing.T) {
	old := time.Now().Add(-48 * time.Hour)
	outside := t.TempDir() // a folder out of every vault
	cases := []struct {
		name  string
		check string
		want  string // in the finding's problem; "" for none (repaired by itself)
		brk   func(t *testing.T, fv *fixVault)
		after func(t *testing.T, fv *fixVault) // more proof the fix worked
	}{
		{
			name: "config typo beside the right key", check: "config", want: "memory_char_limit (line 4) is set too",
			brk: func(t *testing.T, fv *fixVault) {
				appendBytes(t, fv.path(".nexus/config.yaml"), []byte("memroy_char_limit: 5000\n"))
			},
			after: func(t *testing.T, fv *fixVault) {
				data, _ := os.ReadFile(fv.path(".nexus/config.yaml"))
				if !strings.Contains(string(data), "memory_char_limit: 2200") || strings.Contains(string(data), "memroy") {
					t.Errorf("config after the fix:\n%s", data)
				}
			},
		},
		{
			name: "config typo alone", check: "config", want: "memory_char_limit keeps its default",
			brk: func(t *testing.T, fv *fixVault) {
				p := fv.path(".nexus/config.yaml")
				data, _ := os.ReadFile(p)
				os.WriteFile(p, bytes.Replace(data, []byte("memory_char_limit:"), []byte("memroy_char_limit:"), 1), 0o644)
			},
			after: func(t *testing.T, fv *fixVault) {
				data, _ := os.ReadFile(fv.path(".nexus/config.yaml"))
				if !strings.Contains(string(data), "memory_char_limit: 2200") {
					t.Errorf("config after the fix:\n%s", data)
				}
			},
		},
		{
			name: "damaged key file", check: "key-pair", want: "key file of agent lyra cannot be read as a key",
			brk: func(t *testing.T, fv *fixVault) {
				os.WriteFile(fv.path(".nexus/keys/lyra.key"), []byte("not a key\n"), 0o600)
			},
			after: func(t *testing.T, fv *fixVault) {
				fv.mustRun("--vault", fv.dir, "--agent", "lyra", "log", "append", "signed with the new key")
				fv.mustRun("--vault", fv.dir, "log", "verify")
			},
		},
		{
			name: "missing key", check: "key-pair", want: "lyra has no private key here",
			brk: func(t *testing.T, fv *fixVault) {
				os.Remove(fv.path(".nexus/keys/lyra.key"))
				// Signing refuses rather than make a new identity.
				code, _, errs := fv.nexus("--vault", fv.dir, "--agent", "lyra", "log", "append", "who am I")
				if code != exitRefused || !strings.Contains(errs, "nexus agent new-key lyra") {
					t.Fatalf("append without the key: exit %d, %s", code, errs)
				}
				if _, err := os.Stat(fv.path(".nexus/keys/lyra.key")); err == nil {
					t.Fatal("append made a new key")
				}
			},
			after: func(t *testing.T, fv *fixVault) {
				fv.mustRun("--vault", fv.dir, "--agent", "lyra", "log", "append", "signed with the new key")
				fv.mustRun("--vault", fv.dir, "log", "verify")
			},
		},
		{
			name: "fact approval stuck on its name", check: "review", want: "already exists",
			brk: func(t *testing.T, fv *fixVault) {
				for range 2 {
					fv.mustRun("--vault", fv.dir, "--agent", "lyra", "retain", "--type", "project", "Alpha fact")
				}
				if code, out, errs := fv.nexus("--vault", fv.dir, "review", "approve", "--all"); code != exitRefused {
					t.Fatalf("approve --all: exit %d\n%s%s", code, out, errs)
				}
			},
			after: func(t *testing.T, fv *fixVault) {
				m, _ := filepath.Glob(fv.path("agents/lyra/memory/alpha-fact*.md"))
				if len(m) != 2 {
					t.Errorf("facts after the fix: %v", m)
				}
			},
		},
		{
			name: "torn tail padded with NUL bytes", check: "log", want: "torn tail",
			brk: func(t *testing.T, fv *fixVault) {
				appendBytes(t, fv.feed(), append([]byte("### 2026-12"), make([]byte, 300)...))
			},
			after: func(t *testing.T, fv *fixVault) {
				fv.mustRun("--vault", fv.dir, "log", "verify")
				if out := fv.mustRun("--vault", fv.dir, "search", "apples"); !strings.Contains(out, "apples") {
					t.Errorf("search after the fix: %s", out)
				}
			},
		},
		{
			name: "NUL bytes with entries after them", check: "log", want: "an earlier end of it was padded",
			brk: func(t *testing.T, fv *fixVault) {
				// Text after the padding (typed by hand, or appended by a
				// version that did not cut the padding) leaves it inside.
				appendBytes(t, fv.feed(), append(make([]byte, 300), "\n\npears, typed after the crash\n"...))
				fv.mustRun("--vault", fv.dir, "--agent", "lyra", "log", "append", "more pears")
			},
			after: func(t *testing.T, fv *fixVault) {
				if out := fv.mustRun("--vault", fv.dir, "log", "verify"); !strings.Contains(out, "2 signed entries") {
					t.Errorf("verify after the fix: %s", out)
				}
			},
		},
		{
			name: "torn tail padded with NUL bytes, then an append", check: "log", want: "",
			brk: func(t *testing.T, fv *fixVault) {
				appendBytes(t, fv.feed(), append([]byte("### 2026-12"), make([]byte, 300)...))
				fv.mustRun("--vault", fv.dir, "--agent", "lyra", "log", "append", "pears after the crash")
			},
			after: func(t *testing.T, fv *fixVault) {
				data, _ := os.ReadFile(fv.feed())
				if bytes.IndexByte(data, 0) >= 0 {
					t.Error("the append left the NUL padding in the feed")
				}
				if out := fv.mustRun("--vault", fv.dir, "search", "pears"); !strings.Contains(out, "pears after the crash") {
					t.Errorf("search: %s", out)
				}
			},
		},
		{
			name: "symlink to a folder out of the vault", check: "odd-files", want: "symlink pointing out of the vault",
			brk: func(t *testing.T, fv *fixVault) {
				ext := filepath.Join(outside, "notes-"+strings.ReplaceAll(t.Name(), "/", "-"))
				os.MkdirAll(ext, 0o755)
				os.WriteFile(filepath.Join(ext, "a.md"), []byte("# A\n"), 0o644)
				if err := os.Symlink(ext, fv.path("shared")); err != nil {
					t.Fatal(err)
				}
			},
			after: func(t *testing.T, fv *fixVault) {
				if st, err := os.Lstat(fv.path("shared/a.md")); err != nil || !st.Mode().IsRegular() {
					t.Errorf("copy: %v", err)
				}
			},
		},
		{
			name: "symlink to a file out of the vault", check: "odd-files", want: "symlink pointing out of the vault",
			brk: func(t *testing.T, fv *fixVault) {
				ext := filepath.Join(outside, "b-"+strings.ReplaceAll(t.Name(), "/", "-")+".md")
				os.WriteFile(ext, []byte("# B\n"), 0o644)
				if err := os.Symlink(ext, fv.path("b.md")); err != nil {
					t.Fatal(err)
				}
			},
			after: func(t *testing.T, fv *fixVault) {
				if st, err := os.Lstat(fv.path("b.md")); err != nil || !st.Mode().IsRegular() {
					t.Errorf("copy: %v", err)
				}
			},
		},
		{
			name: "dangling symlink", check: "odd-files", want: "does not exist",
			brk: func(t *testing.T, fv *fixVault) {
				if err := os.Symlink(filepath.Join(outside, "gone.md"), fv.path("gone.md")); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "byte-order mark before frontmatter", check: "odd-files", want: "search skips the mark and reads the frontmatter",
			brk: func(t *testing.T, fv *fixVault) {
				fv.write("notes/bom.md", "\ufeff---\ntags: [ops]\n---\n# Plan\n")
			},
			after: func(t *testing.T, fv *fixVault) {
				data, _ := os.ReadFile(fv.path("notes/bom.md"))
				if string(data) != "---\ntags: [ops]\n---\n# Plan\n" {
					t.Errorf("after the fix: %q", data)
				}
			},
		},
		{
			name: "Syncthing temp file", check: "temp-files", want: "Syncthing's temp file",
			brk: func(t *testing.T, fv *fixVault) {
				fv.write("notes/.syncthing.plan.md.tmp", "half a file")
				os.Chtimes(fv.path("notes/.syncthing.plan.md.tmp"), old, old)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fv := newFixVault(t)
			if code, fs, out := fv.doctor(); code != 0 || len(fs) != 0 {
				t.Fatalf("healthy vault: exit %d\n%s", code, out)
			}
			tc.brk(t, fv)
			_, fs, out := fv.doctor()
			var mine []doctorFinding
			for _, f := range fs {
				if f.Check == tc.check {
					mine = append(mine, f)
				}
			}
			if tc.want == "" {
				// Nothing to fix: the product repaired it by itself.
				for _, f := range mine {
					t.Errorf("found: %s: %s", f.Path, f.Problem)
				}
			} else if len(mine) == 0 || !strings.Contains(mine[0].Problem, tc.want) {
				t.Fatalf("no %s finding saying %q:\n%s", tc.check, tc.want, out)
			}
			for _, f := range mine {
				if code, out := fv.sh(f.Fix); code != 0 {
					t.Fatalf("the fix %q failed: exit %d\n%s", f.Fix, code, out)
				}
			}
			code, fs, out := fv.doctor()
			for _, f := range fs {
				if f.Check == tc.check {
					t.Errorf("after the fix, still: %s: %s", f.Path, f.Problem)
				}
			}
			if code != 0 {
				t.Errorf("doctor after the fix: exit %d\n%s", code, out)
			}
			if tc.after != nil {
				tc.after(t, fv)
			}
		})
	}
}

// TestDoctorSkippedChecks: a check that did not run says "skipped (why)",
// not "ok".
func TestDoctorSkippedChecks(t *testing.T) {
	fv := newFixVault(t)
	fv.write(".nexus/config.yaml", "memory_char_limit: [\n")
	code, out, _ := fv.nexus("--vault", fv.dir, "doctor")
	if code != exitRefused {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "  skip  log         skipped (until the config parses)") || strings.Contains(out, "ok    log") {
		t.Errorf("skipped check:\n%s", out)
	}
}
