// Package version tells which build of Nexus is running: the module
// version and the version-control commit, read from the build information
// the Go toolchain records in every binary ([runtime/debug.ReadBuildInfo]).
//
// 'go install github.com/nexus-memory/nexus/cmd/nexus@v1.2.0' records
// v1.2.0; 'go build' or 'go install ./cmd/nexus' in a git checkout records a
// pseudo-version and the commit (with "+dirty" when files were modified).
// Only a build with neither — 'go run', or a checkout without git — is
// "dev". In a program that uses Nexus as a library, the version is that of
// the nexus module it was built with.
package version

import (
	"runtime"
	"runtime/debug"
	"time"
)

// Module is the module path of Nexus.
const Module = "github.com/nexus-memory/nexus"

// Dev is the version of a build that records none.
const Dev = "dev"

// Info describes the running build.
type Info struct {
	// Version is the nexus module's version ("v1.2.0", a pseudo-version
	// such as "v0.0.0-20261201095627-aa5f43e1b2c3+dirty"), or [Dev].
	Version string `json:"version"`
	// Commit is the version-control revision the binary was built from,
	// when the toolchain recorded one.
	Commit string `json:"commit,omitempty"`
	// CommitTime is that revision's commit time.
	CommitTime time.Time `json:"commit_time,omitzero"`
	// Modified is true when the checkout had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// Go is the toolchain that built the binary ("go1.26.8").
	Go string `json:"go"`
	// Platform is GOOS/GOARCH ("linux/amd64").
	Platform string `json:"platform"`
}

// Get returns the running build's information.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	return fromBuildInfo(bi, ok)
}

// String returns the running build's version: [Info.Version].
func String() string { return Get().Version }

func fromBuildInfo(bi *debug.BuildInfo, ok bool) Info {
	info := Info{Version: Dev, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if !ok || bi == nil {
		return info
	}
	if bi.GoVersion != "" {
		info.Go = bi.GoVersion
	}
	mod := &bi.Main
	if mod.Path != Module {
		mod = nil
		for _, d := range bi.Deps {
			if d.Path == Module {
				mod = d
				if d.Replace != nil {
					mod = d.Replace
				}
				break
			}
		}
	}
	if mod != nil && mod.Version != "" && mod.Version != "(devel)" {
		info.Version = mod.Version
	}
	if mod == &bi.Main {
		// The commit is recorded for the main module only.
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = s.Value
			case "vcs.time":
				info.CommitTime, _ = time.Parse(time.RFC3339, s.Value)
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	return info
}
