package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// doctorCLI runs one nexus invocation in-process.
func doctorCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestDoctorCommand(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := doctorCLI(t, "init", dir); code != 0 {
		t.Fatalf("init: %d %s", code, stderr)
	}
	if code, _, stderr := doctorCLI(t, "--vault", dir, "agent", "add", "lyra"); code != 0 {
		t.Fatalf("agent add: %d %s", code, stderr)
	}
	code, stdout, stderr := doctorCLI(t, "--vault", dir, "doctor")
	if code != 0 || !strings.Contains(stdout, "All checks passed.") {
		t.Fatalf("healthy vault: exit %d\n%s%s", code, stdout, stderr)
	}

	// Plant a leftover temp file (and, on Unix, a readable key).
	tmp := filepath.Join(dir, "projects", ".plan.md.tmp-42")
	os.MkdirAll(filepath.Dir(tmp), 0o755) // init makes only .nexus/
	if err := os.WriteFile(tmp, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, time.Unix(0, 0), time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	want := 1
	key := filepath.Join(dir, ".nexus", "keys", "lyra.key")
	if runtime.GOOS != "windows" {
		if err := os.Chmod(key, 0o640); err != nil {
			t.Fatal(err)
		}
		want++
	}
	code, stdout, stderr = doctorCLI(t, "--vault", dir, "doctor")
	if code != exitRefused {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitRefused, stdout, stderr)
	}
	rmFix := "fix: rm " + tmp
	if runtime.GOOS == "windows" {
		rmFix = `fix: del "` + tmp + `"`
	}
	if !strings.Contains(stdout, rmFix) {
		t.Errorf("temp file fix missing:\n%s", stdout)
	}
	if runtime.GOOS != "windows" && !strings.Contains(stdout, "fix: chmod 600 "+key) {
		t.Errorf("key mode fix missing:\n%s", stdout)
	}
	if !strings.Contains(stderr, "doctor found "+plural(want, "problem", "problems")+": run the fix under each") {
		t.Errorf("stderr: %q", stderr)
	}

	code, stdout, _ = doctorCLI(t, "--vault", dir, "--json", "doctor")
	if code != exitRefused {
		t.Fatalf("--json exit %d", code)
	}
	var rep struct {
		OK      bool `json:"ok"`
		Results []struct {
			Check    string `json:"check"`
			OK       bool   `json:"ok"`
			Findings []struct {
				Path, Problem, Fix, Severity string
			} `json:"findings"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout)
	}
	n := 0
	for _, r := range rep.Results {
		n += len(r.Findings)
		for _, f := range r.Findings {
			if f.Severity != "problem" {
				t.Errorf("finding %+v: severity %q, want problem", f, f.Severity)
			}
		}
	}
	if rep.OK || n != want {
		t.Errorf("json: ok=%v findings=%d, want false %d", rep.OK, n, want)
	}

	// Running the fixes makes it healthy again.
	os.Remove(tmp)
	os.Chmod(key, 0o600)
	if code, stdout, _ := doctorCLI(t, "--vault", dir, "doctor"); code != 0 {
		t.Fatalf("after the fixes: exit %d\n%s", code, stdout)
	}

	// Ordinary writes after a search leave the index behind: a note, with
	// the command to catch up, and exit 0 — a cron check must not alert.
	if code, _, stderr := doctorCLI(t, "--vault", dir, "search", "--hold", "0", "anything"); code != 0 {
		t.Fatalf("search: %d %s", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "projects", "launch.md"), []byte("# Launch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = doctorCLI(t, "--vault", dir, "doctor")
	if code != 0 || !strings.Contains(stdout, "note: .nexus/index: the search index is 1 file behind") || !strings.Contains(stdout, "index rebuild") || !strings.Contains(stdout, "No problems; 1 note above.") {
		t.Fatalf("index behind: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = doctorCLI(t, "--vault", dir, "--json", "doctor")
	var notes struct {
		OK       bool
		Problems int
		Notes    int
	}
	if err := json.Unmarshal([]byte(stdout), &notes); err != nil || code != 0 || !notes.OK || notes.Problems != 0 || notes.Notes != 1 || !strings.Contains(stdout, `"severity": "note"`) {
		t.Fatalf("index behind, --json: exit %d %v\n%s", code, err, stdout)
	}
}

func TestDoctorNotAVault(t *testing.T) {
	code, _, stderr := doctorCLI(t, "--vault", t.TempDir(), "doctor")
	if code == 0 || !strings.Contains(stderr, "not a Nexus vault") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}
