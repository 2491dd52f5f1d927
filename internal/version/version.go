// Package version tells which build of Nexus is running: the module
// version and the version-control commit, read from the build information
// the Go toolchain records in every binary ([runtime/debug.ReadBuildInfo]).
//
// 'go install github.com/nexus-memory/nexus/cmd/nexus@v1.2.0' records
// v1.2.0; 'go build' or 'go install ./cmd/nexus' in a git checkout records a
// pseudo-version and the commit (with "+dirty" when files were modified).
// Only a build with neither — 'go run', or a checkout without git — is
// "dev"; such a build still names a commit when the checkout it was
// compiled from is there to read (Info.CommitSource "checkout"). In a program that uses Nexus as a library, the version is that of
// the nexus module it was built with.
package version

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
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
	// CommitSource is "checkout" when the toolchain recorded no commit
	// ('go run', -buildvcs=false) and Commit is instead the HEAD of the
	// git checkout the binary was built from, read when it runs; "" when
	// the commit was recorded at build time (or set with -ldflags -X).
	CommitSource string `json:"commit_source,omitempty"`
	// Go is the toolchain that built the binary ("go1.26.8").
	Go string `json:"go"`
	// Platform is GOOS/GOARCH ("linux/amd64").
	Platform string `json:"platform"`
}

// Set at link time by release builds that record no build information of
// their own (-ldflags "-X github.com/nexus-memory/nexus/internal/version.stampedVersion=v1.2.0
// -X github.com/nexus-memory/nexus/internal/version.stampedCommit=COMMIT"); they win
// over what the toolchain recorded.
var stampedVersion, stampedCommit string

// Get returns the running build's information.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	info := fromBuildInfo(bi, ok)
	if stampedVersion != "" {
		info.Version = stampedVersion
	}
	if stampedCommit != "" {
		info.Commit = stampedCommit
	}
	if info.Commit == "" && ok && bi != nil && bi.Main.Path == Module {
		// A source build that recorded no commit ('go run'): name the
		// commit of the checkout its sources were compiled from, if the
		// binary knows that path (not with -trimpath) and it is still
		// there.
		if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
			if c := checkoutCommit(filepath.Dir(file)); c != "" {
				info.Commit, info.CommitSource = c, "checkout"
			}
		}
	}
	return info
}

// checkoutCommit returns the commit the git checkout holding dir has
// checked out (HEAD), or "" if dir is in none or HEAD cannot be read. It
// reads the files git keeps (no git command): a .git folder or a worktree's
// .git file, a HEAD that names a branch (loose or packed) or a commit.
func checkoutCommit(dir string) string {
	gitDir := ""
	for d := dir; ; {
		p := filepath.Join(d, ".git")
		if st, err := os.Stat(p); err == nil {
			if st.IsDir() {
				gitDir = p
			} else if b, err := os.ReadFile(p); err == nil {
				// A worktree or submodule: "gitdir: PATH".
				if rest, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); ok {
					gitDir = strings.TrimSpace(rest)
					if !filepath.IsAbs(gitDir) {
						gitDir = filepath.Join(d, gitDir)
					}
				}
			}
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
	if gitDir == "" {
		return ""
	}
	common := gitDir // a worktree's refs live in the main repository
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common = strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
	}
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(b))
	ref, isRef := strings.CutPrefix(head, "ref:")
	if !isRef {
		return commitID(head)
	}
	ref = strings.TrimSpace(ref)
	for _, d := range []string{gitDir, common} {
		if b, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(ref))); err == nil {
			return commitID(strings.TrimSpace(string(b)))
		}
	}
	b, err = os.ReadFile(filepath.Join(common, "packed-refs"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if id, name, ok := strings.Cut(strings.TrimSpace(line), " "); ok && name == ref {
			return commitID(id)
		}
	}
	return ""
}

// commitID returns s if it is a commit id (40 or 64 hex digits), else "".
func commitID(s string) string {
	if len(s) != 40 && len(s) != 64 {
		return ""
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return ""
		}
	}
	return s
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
