package version

import (
	"runtime/debug"
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
