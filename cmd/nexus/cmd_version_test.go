package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/nexus-memory/nexus/internal/version"
)

// TestVersionOfBuiltBinary checks that a real binary reports what the Go
// toolchain recorded in it (as 'go version -m' reads it back), the same way
// through 'nexus version', 'nexus --version' and --json.
func TestVersionOfBuiltBinary(t *testing.T) {
	bin := buildBinary(t)
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	wantVersion, wantCommit, wantSource := version.Dev, "", ""
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod" && f[1] == version.Module && f[2] != "(devel)":
			wantVersion = f[2]
		case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			wantCommit = strings.TrimPrefix(f[1], "vcs.revision=")
		}
	}
	if wantCommit == "" {
		// No commit recorded (-buildvcs=false, as 'go run' has it): the
		// binary names the commit its source checkout has, as git does.
		if head, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
			wantCommit, wantSource = strings.TrimSpace(string(head)), "checkout"
		}
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	line := run("version")
	if !strings.HasPrefix(line, "nexus "+wantVersion+" ") || !strings.Contains(line, " go1.") || strings.Count(line, "\n") != 1 {
		t.Errorf("nexus version = %q, want nexus %s ... go1.x", line, wantVersion)
	}
	if wantCommit != "" && !strings.Contains(line, "(commit "+wantCommit[:12]) {
		t.Errorf("nexus version = %q, want commit %s", line, wantCommit)
	}
	if got := run("--version"); got != line {
		t.Errorf("--version = %q, version = %q", got, line)
	}
	for _, args := range [][]string{{"version", "--json"}, {"--json", "--version"}} {
		var info version.Info
		if err := json.Unmarshal([]byte(run(args...)), &info); err != nil || info.Version != wantVersion || info.Commit != wantCommit || info.CommitSource != wantSource || info.Platform == "" {
			t.Errorf("%v: %+v %v, want version %s commit %q", args, info, err, wantVersion, wantCommit)
		}
	}
}

func TestVersionLine(t *testing.T) {
	for _, tt := range []struct {
		info version.Info
		want string
	}{
		{version.Info{Version: "dev", Go: "go1.26.8", Platform: "linux/amd64"}, "nexus dev go1.26.8 linux/amd64"},
		{version.Info{Version: "v1.2.0", Go: "go1.26.8", Platform: "darwin/arm64"}, "nexus v1.2.0 go1.26.8 darwin/arm64"},
		{
			version.Info{Version: "dev", Commit: "aa5f43e1b2c3d4e5f60718293a4b5c6d7e8f9012", CommitSource: "checkout", Go: "go1.26.8", Platform: "linux/amd64"},
			"nexus dev (commit aa5f43e1b2c3 checked out where it was built from) go1.26.8 linux/amd64",
		},
		{
			version.Info{Version: "v0.0.0-20261201095627-aa5f43e1b2c3+dirty", Commit: "aa5f43e1b2c3d4e5f60718293a4b5c6d7e8f9012", Modified: true, Go: "go1.26.8", Platform: "windows/amd64"},
			"nexus v0.0.0-20261201095627-aa5f43e1b2c3+dirty (commit aa5f43e1b2c3, modified) go1.26.8 windows/amd64",
		},
	} {
		if got := versionLine(tt.info); got != tt.want {
			t.Errorf("versionLine = %q, want %q", got, tt.want)
		}
	}
}

func TestCompletion(t *testing.T) {
	dir := logVault(t) // agents lyra and ella
	for _, shell := range completionShells {
		code, out, errs := logCLI(t, "", "completion", shell)
		if code != 0 || !strings.Contains(out, "nexus") || !strings.Contains(out, "__complete") {
			t.Errorf("completion %s: exit %d, %d bytes\n%s", shell, code, len(out), errs)
		}
		code, out, _ = logCLI(t, "", "--json", "completion", shell)
		var res struct{ Shell, Script string }
		if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || res.Shell != shell || !strings.Contains(res.Script, "__complete") {
			t.Errorf("--json completion %s: exit %d %v", shell, code, err)
		}
	}
	if code, _, errs := logCLI(t, "", "completion", "tcsh"); code != exitUsage || !strings.Contains(errs, `no completion for shell "tcsh": choose bash, zsh, fish or powershell`) {
		t.Errorf("completion tcsh: exit %d %q", code, errs)
	}
	// What the scripts call when TAB is pressed: agent names for --agent.
	code, out, _ := logCLI(t, "", "--vault", dir, "__complete", "log", "read", "--agent", "")
	if code != 0 || !strings.HasPrefix(out, "ella\nlyra\n") {
		t.Errorf("__complete --agent: exit %d %q", code, out)
	}
	code, out, _ = logCLI(t, "", "__complete", "completion", "")
	if code != 0 || !strings.HasPrefix(out, "bash\nzsh\nfish\npowershell\n") {
		t.Errorf("__complete completion: exit %d %q", code, out)
	}
}
