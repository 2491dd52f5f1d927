package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTargets: a release carries Linux, macOS and Windows on amd64 and
// arm64, Windows as zip, the others as tar.gz, named as GoReleaser names
// them.
func TestTargets(t *testing.T) {
	var got []string
	for _, tg := range Targets {
		got = append(got, ArchiveName("v1.2.0", tg))
	}
	want := []string{
		"nexus_1.2.0_linux_amd64.tar.gz", "nexus_1.2.0_linux_arm64.tar.gz",
		"nexus_1.2.0_darwin_amd64.tar.gz", "nexus_1.2.0_darwin_arm64.tar.gz",
		"nexus_1.2.0_windows_amd64.zip", "nexus_1.2.0_windows_arm64.zip",
	}
	if !slices.Equal(got, want) {
		t.Errorf("archives %q, want %q", got, want)
	}
	var names []string
	for _, b := range Binaries {
		names = append(names, exe(b.Name, Target{"windows", "arm64"}))
	}
	if !slices.Equal(names, []string{"nexus.exe", "nexus-lite.exe"}) || Binaries[1].Tags != "lite" {
		t.Errorf("windows binaries %q (%+v)", names, Binaries)
	}
}

var testFiles = []File{
	{Name: "nexus", Mode: 0o755, Data: []byte("\x7fELF binary")},
	{Name: "README.md", Mode: 0o644, Data: []byte("# Nexus\n")},
	{Name: "nexus-lite", Mode: 0o755, Data: bytes.Repeat([]byte("lean "), 1000)},
}

// TestArchivesAreReproducible: the same files give the same bytes, in
// name order, owned by 0 with the given time and each file's mode, and
// the contents read back.
func TestArchivesAreReproducible(t *testing.T) {
	mtime := time.Date(2026, 12, 1, 9, 56, 27, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		make  func([]File, time.Time) ([]byte, error)
		read  func(t *testing.T, b []byte) []archiveEntry
		owner bool
	}{
		{"tar.gz", TarGz, readTarGz, true},
		{"zip", Zip, readZip, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := tc.make(testFiles, mtime)
			if err != nil {
				t.Fatal(err)
			}
			reversed := slices.Clone(testFiles)
			slices.Reverse(reversed)
			b, err := tc.make(reversed, mtime)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("the same files in another order gave other bytes")
			}
			if c, _ := tc.make(testFiles, mtime.Add(time.Hour)); bytes.Equal(a, c) {
				t.Errorf("another time gave the same bytes: the time is not recorded")
			}
			got := tc.read(t, a)
			var names []string
			for _, e := range got {
				names = append(names, e.name)
				var want File
				for _, f := range testFiles {
					if f.Name == e.name {
						want = f
					}
				}
				if e.mode != want.Mode || !e.mtime.Equal(mtime) || e.data != string(want.Data) {
					t.Errorf("%s: mode %v time %v %d bytes, want %v %v %d bytes", e.name, e.mode, e.mtime, len(e.data), want.Mode, mtime, len(want.Data))
				}
				if tc.owner && (e.uid != 0 || e.gid != 0 || e.uname != "" || e.grp != "") {
					t.Errorf("%s: owner %d:%d (%s:%s), want 0:0", e.name, e.uid, e.gid, e.uname, e.grp)
				}
			}
			if want := []string{"README.md", "nexus", "nexus-lite"}; !slices.Equal(names, want) {
				t.Errorf("entries %q, want %q", names, want)
			}
		})
	}
}

// archiveEntry is a file read back from an archive.
type archiveEntry struct {
	name       string
	mode       os.FileMode
	mtime      time.Time
	uid, gid   int
	data       string
	uname, grp string
}

func readTarGz(t *testing.T, b []byte) (entries []archiveEntry) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return entries
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, archiveEntry{h.Name, os.FileMode(h.Mode), h.ModTime, h.Uid, h.Gid, string(data), h.Uname, h.Gname})
	}
}

func readZip(t *testing.T, b []byte) (entries []archiveEntry) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, archiveEntry{f.Name, f.Mode(), f.Modified, 0, 0, string(data), "", ""})
	}
	return entries
}

// TestSHA256SUMSIsWhatSha256sumChecks writes two archives and their
// SHA256SUMS and has sha256sum check them; a changed archive fails.
func TestSHA256SUMSIsWhatSha256sumChecks(t *testing.T) {
	dir := t.TempDir()
	sums := map[string][]byte{}
	for _, name := range []string{"nexus_1.2.0_windows_arm64.zip", "nexus_1.2.0_linux_amd64.tar.gz"} {
		data := []byte("archive " + name)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(data)
		sums[name] = s[:]
	}
	b := SHA256SUMS(sums)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 || !regexp.MustCompile(`^[0-9a-f]{64}  nexus_1\.2\.0_linux_amd64\.tar\.gz$`).MatchString(lines[0]) {
		t.Fatalf("SHA256SUMS:\n%s", b)
	}
	if err := os.WriteFile(filepath.Join(dir, "SHA256SUMS"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	sha256sum, err := exec.LookPath("sha256sum")
	if err != nil {
		t.Skip("no sha256sum")
	}
	check := exec.Command(sha256sum, "-c", "SHA256SUMS")
	check.Dir = dir
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum -c: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "nexus_1.2.0_linux_amd64.tar.gz"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	check = exec.Command(sha256sum, "-c", "SHA256SUMS")
	check.Dir = dir
	if out, err := check.CombinedOutput(); err == nil {
		t.Fatalf("sha256sum -c passed a changed archive:\n%s", out)
	}
}

// TestStampedVersion builds nexus and nexus-lite for this machine as a
// release does and runs --version: it names the stamped version and
// commit (not the checkout's: -trimpath leaves the binary no path to it).
func TestStampedVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nexus twice")
	}
	host := Target{runtime.GOOS, runtime.GOARCH}
	if !slices.Contains(Targets, host) {
		t.Skipf("%s/%s is not a release target", host.GOOS, host.GOARCH)
	}
	const version, commit = "v9.8.7-rc.1", "0123456789abcdef0123456789abcdef01234567"
	dir := t.TempDir()
	for _, b := range Binaries {
		t.Run(b.Name, func(t *testing.T) {
			bin := filepath.Join(dir, exe(b.Name, host))
			if err := Build("../..", host, b, version, commit, bin); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, "--version").CombinedOutput()
			if err != nil {
				t.Fatalf("%s --version: %v\n%s", b.Name, err, out)
			}
			if want := "nexus " + version + " (commit " + commit[:12]; !strings.HasPrefix(string(out), want) {
				t.Errorf("%s --version = %q, want it to start %q", b.Name, out, want)
			}
		})
	}
}

// TestInstallDocsNameEveryArchive: the download lines in README.md and
// docs/install.md name the archives this program makes, one for every
// target in docs/install.md.
func TestInstallDocsNameEveryArchive(t *testing.T) {
	named := regexp.MustCompile(`nexus_\$\{?VERSION\}?_[a-z0-9]+_[a-z0-9]+\.(?:tar\.gz|zip)`)
	made := map[string]bool{}
	for _, tg := range Targets {
		made[strings.Replace(ArchiveName("vVERSION", tg), "VERSION", "${VERSION}", 1)] = true
	}
	for _, doc := range []string{"README.md", "docs/install.md"} {
		data, err := os.ReadFile(filepath.Join("../..", doc))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, n := range named.FindAllString(string(data), -1) {
			if !made[n] {
				t.Errorf("%s names %s, which a release does not carry (in a shell, write ${VERSION}_)", doc, n)
			}
			seen[n] = true
		}
		if len(seen) == 0 {
			t.Errorf("%s names no release archive", doc)
		}
		if doc == "docs/install.md" {
			for n := range made {
				if !seen[n] {
					t.Errorf("%s does not name %s", doc, n)
				}
			}
		}
	}
}
