package version

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "aa5f43e1b2c3d4e5f60718293a4b5c6d7e8f9012"},
		{Key: "vcs.time", Value: "2026-12-01T09:56:27Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	commitTime := time.Date(2026, 12, 1, 9, 56, 27, 0, time.UTC)
	for _, tt := range []struct {
		name     string
		bi       *debug.BuildInfo
		ok       bool
		version  string
		commit   string
		modified bool
	}{
		{name: "no build info", ok: false, version: Dev},
		{name: "go run", ok: true, bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: Module, Version: "(devel)"}}, version: Dev},
		{name: "tagged go install", ok: true, bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: Module, Version: "v1.2.0"}}, version: "v1.2.0"},
		{
			name: "build in a modified checkout", ok: true,
			bi:      &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: Module, Version: "v0.0.0-20261201095627-aa5f43e1b2c3+dirty"}, Settings: vcs},
			version: "v0.0.0-20261201095627-aa5f43e1b2c3+dirty", commit: "aa5f43e1b2c3d4e5f60718293a4b5c6d7e8f9012", modified: true,
		},
		{
			name: "checkout without a version, with a commit", ok: true,
			bi:      &debug.BuildInfo{Main: debug.Module{Path: Module, Version: "(devel)"}, Settings: vcs},
			version: Dev, commit: "aa5f43e1b2c3d4e5f60718293a4b5c6d7e8f9012", modified: true,
		},
		{
			name: "library in another program", ok: true,
			bi: &debug.BuildInfo{
				Main:     debug.Module{Path: "example.com/mybot", Version: "v3.0.0"},
				Deps:     []*debug.Module{{Path: "golang.org/x/text", Version: "v0.20.0"}, {Path: Module, Version: "v1.4.1"}},
				Settings: vcs, // the other program's commit, not ours
			},
			version: "v1.4.1",
		},
		{
			name: "library replaced by a local copy", ok: true,
			bi: &debug.BuildInfo{
				Main: debug.Module{Path: "example.com/mybot"},
				Deps: []*debug.Module{{Path: Module, Version: "v1.4.1", Replace: &debug.Module{Path: "../nexus", Version: ""}}},
			},
			version: Dev,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := fromBuildInfo(tt.bi, tt.ok)
			if got.Version != tt.version || got.Commit != tt.commit || got.Modified != tt.modified {
				t.Errorf("got %+v, want version %q commit %q modified %v", got, tt.version, tt.commit, tt.modified)
			}
			if tt.commit != "" && !got.CommitTime.Equal(commitTime) {
				t.Errorf("commit time %v", got.CommitTime)
			}
			if got.Go == "" || got.Platform == "" {
				t.Errorf("no Go version or platform: %+v", got)
			}
		})
	}
}

// TestCheckoutCommit reads HEAD the ways git keeps it: a branch in a loose
// ref or in packed-refs, a detached HEAD, and a worktree whose .git is a
// file pointing into the main repository.
func TestCheckoutCommit(t *testing.T) {
	const a = "aa5f43e1b2c3d4e5f60718293a4b5c6d7e8f9012"
	const b = "bb5f43e1b2c3d4e5f60718293a4b5c6d7e8f9012"
	for _, tc := range []struct {
		name  string
		files map[string]string // under the temp root; "repo/src" is asked
		want  string
	}{
		{"loose branch", map[string]string{"repo/.git/HEAD": "ref: refs/heads/main\n", "repo/.git/refs/heads/main": a + "\n"}, a},
		{"packed branch", map[string]string{"repo/.git/HEAD": "ref: refs/heads/main\n", "repo/.git/packed-refs": "# pack-refs with: peeled\n" + b + " refs/heads/other\n" + a + " refs/heads/main\n"}, a},
		{"detached", map[string]string{"repo/.git/HEAD": b + "\n"}, b},
		{"worktree", map[string]string{
			"repo/.git":                         "gitdir: ../main/.git/worktrees/wt\n",
			"main/.git/worktrees/wt/HEAD":       "ref: refs/heads/feature\n",
			"main/.git/worktrees/wt/commondir":  "../..\n",
			"main/.git/refs/heads/feature":      b + "\n",
			"main/.git/refs/heads/not-this-one": a + "\n",
		}, b},
		{"branch with no commit yet", map[string]string{"repo/.git/HEAD": "ref: refs/heads/main\n"}, ""},
		{"not a commit id", map[string]string{"repo/.git/HEAD": "garbage\n"}, ""},
		{"no checkout", map[string]string{"repo/src/x.go": ""}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "repo", "src"), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, body := range tc.files {
				p := filepath.Join(root, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := checkoutCommit(filepath.Join(root, "repo", "src")); got != tc.want {
				t.Errorf("checkoutCommit = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestGetNamesTheCheckoutsCommit: this test binary records no commit ('go
// test' stamps none), so Get names the commit of the checkout it was built
// from, as 'git rev-parse HEAD' does.
func TestGetNamesTheCheckoutsCommit(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("no git checkout here: %v", err)
	}
	if _, file, _, _ := runtime.Caller(0); !filepath.IsAbs(file) {
		t.Skip("built with -trimpath: the binary does not know its source folder")
	}
	got := Get()
	if got.Commit != strings.TrimSpace(string(head)) || got.CommitSource != "checkout" {
		t.Errorf("Get() = %+v, want commit %s from the checkout", got, head)
	}
}
