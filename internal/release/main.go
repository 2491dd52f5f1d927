// Command release builds Nexus's release archives: for each of [Targets],
// nexus and the lean nexus-lite (-tags lite) in a tar.gz (a zip for
// Windows) with the README (and a LICENSE, when the repository has one),
// and a SHA256SUMS file beside them, as a GitHub release page carries them.
//
//	go run ./internal/release -out dist            # HEAD must carry a tag v*, the checkout be clean
//	go run ./internal/release -snapshot -out dist  # any checkout: version v0.0.0-SNAPSHOT-COMMIT
//
// The builds are reproducible: -trimpath, CGO_ENABLED=0, and the version
// and commit set at link time (-X internal/version.stampedVersion and
// stampedCommit); in the archives every file has the commit's time, owner
// 0 and a fixed mode, in name order. The same checkout and Go version give
// the same bytes. docs/install.md says how a release is cut.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/internal/atomicfile"
)

// Target is one platform a release carries.
type Target struct{ GOOS, GOARCH string }

// Targets are the platforms of a release: Linux, macOS and Windows on
// amd64 and arm64.
var Targets = []Target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// Binary is one program in every archive.
type Binary struct {
	Name string // without .exe
	Tags string // go build -tags
}

// Binaries are the programs in every archive: the full nexus, and the
// lean build that the runtime adapters run every turn (docs/cli.md), which
// finds nexus in its own folder for the commands it forwards.
var Binaries = []Binary{{Name: "nexus"}, {Name: "nexus-lite", Tags: "lite"}}

const versionPkg = "github.com/nexus-memory/nexus/internal/version"

// ArchiveName is the file name of target's archive for version ("v1.2.0"
// gives nexus_1.2.0_linux_amd64.tar.gz, as GoReleaser names them).
func ArchiveName(version string, t Target) string {
	ext := ".tar.gz"
	if t.GOOS == "windows" {
		ext = ".zip"
	}
	return "nexus_" + strings.TrimPrefix(version, "v") + "_" + t.GOOS + "_" + t.GOARCH + ext
}

// exe is name as target's executables are named.
func exe(name string, t Target) string {
	if t.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// File is one file of an archive.
type File struct {
	Name string
	Mode os.FileMode // 0o755 or 0o644
	Data []byte
}

func main() {
	out := flag.String("out", "dist", "`folder` for the archives and SHA256SUMS (must be empty or absent)")
	snapshot := flag.Bool("snapshot", false, "build any checkout as v0.0.0-SNAPSHOT-COMMIT (CI); without it HEAD must carry a tag v* and the checkout be clean")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/release [-snapshot] [-out dist]")
		os.Exit(2)
	}
	if err := run(*out, *snapshot, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(out string, snapshot bool, w io.Writer) error {
	root, err := git(".", "rev-parse", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("find the checkout (the release needs git): %w", err)
	}
	commit, err := git(root, "rev-parse", "HEAD")
	if err != nil {
		return fmt.Errorf("read HEAD: %w", err)
	}
	mtime, err := sourceTime(root)
	if err != nil {
		return err
	}
	var version string
	if snapshot {
		version = "v0.0.0-SNAPSHOT-" + commit[:12]
	} else {
		tag, err := git(root, "describe", "--tags", "--exact-match", "--match", "v*", "HEAD")
		if err != nil || !semver.MatchString(tag) {
			return fmt.Errorf("HEAD carries no release tag v MAJOR.MINOR.PATCH (%q): tag it (git tag -a v1.2.0) or pass -snapshot", tag)
		}
		if dirty, err := git(root, "status", "--porcelain"); err != nil || dirty != "" {
			return fmt.Errorf("the checkout has uncommitted changes; a release is built from the tagged commit as it is:\n%s", dirty)
		}
		version = tag
	}
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return fmt.Errorf("output folder %s is not empty: remove it first", out)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("create output folder: %w", err)
	}
	docs, err := docFiles(root)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "nexus-release-")
	if err != nil {
		return fmt.Errorf("create build folder: %w", err)
	}
	defer os.RemoveAll(work)

	sums := map[string][]byte{}
	for _, t := range Targets {
		files := append([]File(nil), docs...)
		for _, b := range Binaries {
			name := exe(b.Name, t)
			bin := filepath.Join(work, t.GOOS+"_"+t.GOARCH, name)
			if err := Build(root, t, b, version, commit, bin); err != nil {
				return err
			}
			data, err := os.ReadFile(bin)
			if err != nil {
				return fmt.Errorf("read built %s: %w", name, err)
			}
			files = append(files, File{Name: name, Mode: 0o755, Data: data})
		}
		name := ArchiveName(version, t)
		var archive []byte
		if t.GOOS == "windows" {
			archive, err = Zip(files, mtime)
		} else {
			archive, err = TarGz(files, mtime)
		}
		if err != nil {
			return fmt.Errorf("archive %s: %w", name, err)
		}
		if err := atomicfile.WriteFile(filepath.Join(out, name), archive, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		sum := sha256.Sum256(archive)
		sums[name] = sum[:]
		fmt.Fprintf(w, "%s  %d bytes\n", name, len(archive))
	}
	if err := atomicfile.WriteFile(filepath.Join(out, "SHA256SUMS"), SHA256SUMS(sums), 0o644); err != nil {
		return fmt.Errorf("write SHA256SUMS: %w", err)
	}
	fmt.Fprintf(w, "SHA256SUMS\nnexus %s (commit %s) in %s\n", version, commit[:12], out)
	return nil
}

// semver is a release tag: vMAJOR.MINOR.PATCH with an optional
// pre-release (v1.2.0, v1.3.0-rc.1).
var semver = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// Build builds binary b for target t into path, the way a release does:
// no cgo, no local paths, version and commit stamped at link time.
func Build(root string, t Target, b Binary, version, commit, path string) error {
	args := []string{"build", "-trimpath",
		"-ldflags", "-s -w -X " + versionPkg + ".stampedVersion=" + version + " -X " + versionPkg + ".stampedCommit=" + commit,
		"-o", path}
	if b.Tags != "" {
		args = append(args, "-tags", b.Tags)
	}
	args = append(args, "./cmd/nexus")
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.GOOS, "GOARCH="+t.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s for %s/%s: %w\n%s", b.Name, t.GOOS, t.GOARCH, err, out)
	}
	return nil
}

// docFiles are the README and, if there is one, the LICENSE.
func docFiles(root string) ([]File, error) {
	var files []File
	for _, name := range []string{"README.md", "LICENSE", "LICENSE.md", "LICENSE.txt"} {
		data, err := os.ReadFile(filepath.Join(root, name))
		if errors.Is(err, os.ErrNotExist) && name != "README.md" {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		files = append(files, File{Name: name, Mode: 0o644, Data: data})
	}
	return files, nil
}

// sourceTime is the time every file in the archives carries:
// SOURCE_DATE_EPOCH if set (reproducible-builds.org), else HEAD's commit
// time.
func sourceTime(root string) (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		var err error
		if s, err = git(root, "log", "-1", "--format=%ct", "HEAD"); err != nil {
			return time.Time{}, fmt.Errorf("read HEAD's commit time: %w", err)
		}
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse source time %q: %w", s, err)
	}
	return time.Unix(sec, 0).UTC(), nil
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// sorted returns files in name order.
func sorted(files []File) []File {
	s := append([]File(nil), files...)
	sort.Slice(s, func(i, j int) bool { return s[i].Name < s[j].Name })
	return s
}

// TarGz returns a gzip-compressed tar of files, in name order, each owned
// by 0:0 with mtime: the same files give the same bytes.
func TarGz(files []File, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, f := range sorted(files) {
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     f.Name,
			Mode:     int64(f.Mode.Perm()),
			Size:     int64(len(f.Data)),
			ModTime:  mtime,
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("write header of %s: %w", f.Name, err)
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, fmt.Errorf("write %s: %w", f.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Zip returns a zip of files, in name order, each with mtime and its mode:
// the same files give the same bytes.
func Zip(files []File, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range sorted(files) {
		hdr := &zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: mtime}
		hdr.SetMode(f.Mode.Perm())
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return nil, fmt.Errorf("write header of %s: %w", f.Name, err)
		}
		if _, err := fw.Write(f.Data); err != nil {
			return nil, fmt.Errorf("write %s: %w", f.Name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SHA256SUMS is the checksum file of the archives in sums, in the format
// 'sha256sum -c' reads: "HEX  NAME" a line, in name order.
func SHA256SUMS(sums map[string][]byte) []byte {
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sums[n]), n)
	}
	return b.Bytes()
}
