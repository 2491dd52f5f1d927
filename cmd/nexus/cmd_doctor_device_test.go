//go:build !lite && !windows

package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fixCommand finds in a printed fix the command line a person runs: the
// nexus device command a person runs (without the "  #" comment or the
// prose around it); runnableFix fills in the NAME a person chooses.
var fixCommand = regexp.MustCompile(`(nexus (?:--vault \S+ )?device (?:name NAME|restore-keys))`)

func runnableFix(t *testing.T, fix, name string) string {
	t.Helper()
	m := fixCommand.FindStringSubmatch(fix)
	if m == nil {
		t.Fatalf("no device command in the fix %q", fix)
	}
	return strings.Replace(m[1], "NAME", name, 1)
}

// otherKey returns a public key of another machine in IDENTITY.md's form.
func otherKey(t *testing.T) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return "ed25519:" + base64.StdEncoding.EncodeToString(pub)
}

// TestDoctorDeviceFixesWork breaks a vault the ways a device name goes
// wrong (issue 30), follows every fix doctor prints for a problem (the
// device command in it, with NAME filled in), and sees doctor exit 0.
func TestDoctorDeviceFixesWork(t *testing.T) {
	keyLine := regexp.MustCompile(`(?m)^    - (\S+) (ed25519:\S+)$`)
	cases := []struct {
		name string
		want string // in a problem of the machine check, "" when another check names it
		brk  func(t *testing.T, fv *fixVault)
		// forked: the feed keeps its two branches, which 'log verify'
		// goes on naming, as a note (exit 0; 1 with --strict), once
		// doctor's fix has settled them.
		forked bool
	}{
		{
			// lyra came from vps; this machine added its key on its first
			// append; a git conflict in device_keys resolved "theirs" kept
			// vps's line only.
			name: "IDENTITY.md merge resolved theirs", want: "no longer lists this machine's key",
			brk: func(t *testing.T, fv *fixVault) {
				p := fv.path("agents/lyra/IDENTITY.md")
				data, _ := os.ReadFile(p)
				m := keyLine.FindStringSubmatch(string(data))
				if m == nil {
					t.Fatalf("no device key in:\n%s", data)
				}
				vps := otherKey(t)
				s := strings.Replace(string(data), "public_key: "+m[2], "public_key: "+vps, 1)
				s = strings.Replace(s, m[0], "    - vps "+vps, 1)
				os.WriteFile(p, []byte(s), 0o644)
			},
		},
		{
			// Three machines; the merge kept the two other lines.
			name: "IDENTITY.md merge resolved ours on another machine", want: "no longer lists this machine's key",
			brk: func(t *testing.T, fv *fixVault) {
				p := fv.path("agents/lyra/IDENTITY.md")
				data, _ := os.ReadFile(p)
				m := keyLine.FindStringSubmatch(string(data))
				vps, pi := otherKey(t), otherKey(t)
				s := strings.Replace(string(data), "public_key: "+m[2], "public_key: "+vps, 1)
				s = strings.Replace(s, m[0], "    - vps "+vps+"\n    - pi "+pi, 1)
				os.WriteFile(p, []byte(s), 0o644)
			},
		},
		{
			name: "vault folder copied whole to another machine", want: "is a copy of another machine's",
			brk: func(t *testing.T, fv *fixVault) {
				to := filepath.Join(t.TempDir(), "copy")
				cpA(t, fv.dir, to)
				fv.dir = to
				if code, _, errs := fv.nexus("--vault", fv.dir, "--agent", "lyra", "log", "append", "on the copy"); code != exitRefused {
					t.Fatalf("append on the copy: exit %d %s", code, errs)
				}
			},
		},
		{
			// Two machines with one device name (an older Nexus, or both
			// picked the host name before either claim arrived) forked
			// lyra's feed; Syncthing kept the other side as a conflict copy.
			name: "same-device fork",
			brk: func(t *testing.T, fv *fixVault) {
				other := filepath.Join(t.TempDir(), "other")
				cpA(t, fv.dir, other)
				for _, rel := range []string{".nexus/state", ".nexus/keys/lyra.key", "log/devices"} {
					os.RemoveAll(filepath.Join(other, rel))
				}
				device := strings.TrimSpace(fv.mustRun("--vault", fv.dir, "device"))
				if code, _, errs := fv.nexus("--vault", other, "device", "name", device); code != 0 {
					t.Fatalf("device name on the other machine: %s", errs)
				}
				fv.mustRun("--vault", other, "agent", "new-key", "lyra")
				fv.mustRun("--vault", other, "--agent", "lyra", "log", "append", "on the other machine")
				fv.mustRun("--vault", fv.dir, "--agent", "lyra", "log", "append", "on this machine")
				feed := fv.feed()
				rel, _ := filepath.Rel(fv.dir, feed)
				data, _ := os.ReadFile(filepath.Join(other, rel))
				fv.write(strings.TrimSuffix(rel, ".md")+".sync-conflict-20261204-000000-ABCDEFG.md", string(data))
				id, _ := os.ReadFile(filepath.Join(other, "agents/lyra/IDENTITY.md"))
				fv.write("agents/lyra/IDENTITY.md", string(id))
			},
			forked: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fv := newFixVault(t)
			if code, fs, out := fv.doctor(); code != 0 || len(fs) != 0 {
				t.Fatalf("healthy vault: exit %d\n%s", code, out)
			}
			tc.brk(t, fv)
			code, fs, out := fv.doctor()
			if code == 0 {
				t.Fatalf("doctor found nothing:\n%s", out)
			}
			found := false
			var fixes []string
			for _, f := range fs {
				if f.Severity == "note" {
					continue
				}
				found = found || f.Check == "machine" && strings.Contains(f.Problem, tc.want)
				cmd := runnableFix(t, f.Fix, "desk")
				if !containsString(fixes, cmd) {
					fixes = append(fixes, cmd)
				}
			}
			if tc.want != "" && !found {
				t.Fatalf("no machine finding saying %q:\n%s", tc.want, out)
			}
			for _, fix := range fixes {
				if code, out := fv.sh(fix); code != 0 {
					t.Fatalf("the fix %q failed: exit %d\n%s", fix, code, out)
				}
			}
			if code, _, out := fv.doctor(); code != 0 {
				t.Fatalf("doctor after the fixes %q: exit %d\n%s", fixes, code, out)
			}
			// And the vault works: lyra appends here, and the log verifies.
			fv.mustRun("--vault", fv.dir, "--agent", "lyra", "log", "append", "after the fix")
			// A settled fork is no tampering: verify names it as a note
			// and exits 0, as doctor does.
			out = fv.mustRun("--vault", fv.dir, "log", "verify")
			if tc.forked {
				if !strings.Contains(out, "note: the feed of lyra@") || !strings.Contains(out, "no longer grows") {
					t.Errorf("log verify says nothing of the settled fork:\n%s", out)
				}
				if code, out, _ := fv.nexus("--vault", fv.dir, "log", "verify", "--strict"); code != exitRefused {
					t.Errorf("log verify --strict passed a settled fork: exit %d\n%s", code, out)
				}
			}
			if code, _, out := fv.doctor(); code != 0 {
				t.Fatalf("doctor after the next append: exit %d\n%s", code, out)
			}
		})
	}
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
