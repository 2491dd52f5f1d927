//go:build !lite && !windows

package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// treeDigest is every file of dir outside .nexus/state (locks come and
// go there) with its bytes, to see that nothing was written.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && filepath.ToSlash(rel) == ".nexus/state" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s %d %x\n", rel, len(data), data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// cpA copies the vault folder whole, as cp -a does, .nexus/ included.
func cpA(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
}

func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := logCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("nexus %v: exit %d\n%s%s", args, code, out, errs)
	}
	return out
}

// TestCopiedVaultRefusesAppends: a vault folder copied whole to another
// machine (.nexus/ included, so the same device name and keys) is told by
// its first append, which writes nothing and asks for a device name;
// reading works; after 'device name' appends go to the copy's own feed,
// signed by a key of its own, and the original goes on unaffected.
func TestCopiedVaultRefusesAppends(t *testing.T) {
	a := t.TempDir() + "/a"
	mustCLI(t, "init", a)
	mustCLI(t, "--vault", a, "device", "name", "laptop")
	mustCLI(t, "--vault", a, "agent", "add", "lyra")
	mustCLI(t, "--vault", a, "--agent", "lyra", "log", "append", "written on the laptop")
	b := t.TempDir() + "/b"
	cpA(t, a, b)

	before := treeDigest(t, b)
	for _, args := range [][]string{
		{"--vault", b, "--agent", "lyra", "log", "append", "written on the copy"},
		{"--vault", b, "--agent", "lyra", "decide", "Use the copy", "--decision", "d", "--rationale", "r"},
	} {
		code, out, errs := logCLI(t, "", args...)
		if code != exitRefused || !strings.Contains(errs, "copied from another machine") || !strings.Contains(errs, "nexus device name NAME") {
			t.Fatalf("%v on the copy: exit %d\n%s%s", args[4], code, out, errs)
		}
	}
	if after := treeDigest(t, b); after != before {
		t.Fatalf("a refused append wrote into the copy:\nbefore\n%s\nafter\n%s", before, after)
	}
	if out := mustCLI(t, "--vault", b, "log", "read"); !strings.Contains(out, "written on the laptop") {
		t.Fatalf("reading on the copy: %s", out)
	}
	code, out, errs := logCLI(t, "", "--vault", b, "device")
	if code != 0 || strings.TrimSpace(out) != "laptop" || !strings.Contains(errs, "nexus device name NAME") {
		t.Fatalf("device on the copy: exit %d %q %q", code, out, errs)
	}
	if code, _, errs := logCLI(t, "", "--vault", b, "device", "name", "laptop"); code != exitRefused || !strings.Contains(errs, "another machine") {
		t.Fatalf("taking the other machine's name: exit %d %s", code, errs)
	}

	out = mustCLI(t, "--vault", b, "device", "name", "desk")
	if !strings.Contains(out, "machine of its own") {
		t.Errorf("device name on the copy: %s", out)
	}
	mustCLI(t, "--vault", b, "--agent", "lyra", "log", "append", "written on the desk")
	mustCLI(t, "--vault", a, "--agent", "lyra", "log", "append", "laptop again")
	if m, _ := filepath.Glob(filepath.Join(b, "log/live/*/lyra@desk.md")); len(m) != 1 {
		t.Fatalf("the copy's own feed: %v", m)
	}
	keyA, _ := os.ReadFile(filepath.Join(a, ".nexus/keys/lyra.key"))
	keyB, _ := os.ReadFile(filepath.Join(b, ".nexus/keys/lyra.key"))
	if len(keyA) == 0 || bytes.Equal(keyA, keyB) {
		t.Errorf("the copy signs with the laptop's key")
	}
	for _, dir := range []string{a, b} {
		mustCLI(t, "--vault", dir, "log", "verify")
	}
}

// syncUpdate brings from's newer files to to, as 'rsync -a --update'
// does (a file newer on the receiving side is kept), leaving out what
// never travels (.nexus/state, .nexus/keys, .nexus/index). It runs the
// real rsync when there is one. rsync --update compares whole seconds:
// a receiver's file newer within the same second counts as equal and is
// replaced by the sender's older one, so the test spaces its appends a
// few seconds apart on the files' clock ([spacedClock]).
func syncUpdate(t *testing.T, from, to string) {
	t.Helper()
	if rsync, err := exec.LookPath("rsync"); err == nil {
		out, err := exec.Command(rsync, "-a", "--update", "--exclude=/.nexus/state", "--exclude=/.nexus/keys", "--exclude=/.nexus/index", from+"/", to+"/").CombinedOutput()
		if err != nil {
			t.Fatalf("rsync: %v\n%s", err, out)
		}
		return
	}
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		switch filepath.ToSlash(rel) {
		case ".nexus/state", ".nexus/keys", ".nexus/index":
			return filepath.SkipDir
		}
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		src, _ := d.Info()
		if st, err := os.Stat(dst); err == nil && st.ModTime().After(src.ModTime()) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, src.Mode().Perm()); err != nil {
			return err
		}
		return os.Chtimes(dst, src.ModTime(), src.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCopiedVaultRsyncUpdate is the scenario of issue 30: a vault folder
// copied whole and then kept in step by 'rsync --update' both ways. The
// copy never writes into the original's feed, so no acknowledged entry is
// overwritten by a newer file of the other side: every one is read and
// verifies on both machines (once a person on the laptop accepted the
// desk as a new device of lyra's).
func TestCopiedVaultRsyncUpdate(t *testing.T) {
	a := t.TempDir() + "/a"
	mustCLI(t, "init", a)
	mustCLI(t, "--vault", a, "device", "name", "laptop")
	mustCLI(t, "--vault", a, "agent", "add", "lyra")
	mustCLI(t, "--vault", a, "--agent", "lyra", "log", "append", "laptop 0")
	b := t.TempDir() + "/b"
	cpA(t, a, b)
	acked := []string{"laptop 0"}
	if code, _, _ := logCLI(t, "", "--vault", b, "--agent", "lyra", "log", "append", "refused"); code != exitRefused {
		t.Fatalf("first append on the copy: exit %d", code)
	}
	mustCLI(t, "--vault", b, "device", "name", "desk")
	clk := &spacedClock{next: time.Now().Add(time.Hour)}
	for round := 1; round <= 5; round++ {
		for _, side := range []struct{ dir, name string }{{a, "laptop"}, {b, "desk"}} {
			s := fmt.Sprintf("%s %d", side.name, round)
			clk.run(t, side.dir, "--vault", side.dir, "--agent", "lyra", "log", "append", s)
			acked = append(acked, s)
		}
		syncUpdate(t, a, b)
		syncUpdate(t, b, a)
		if round == 1 {
			// The laptop sees lyra write from a new device: a person
			// there accepts it (SPEC §4, keys are pinned).
			mustCLI(t, "--vault", a, "log", "trust", "lyra@desk", "--yes")
		}
	}
	for _, dir := range []string{a, b} {
		out := mustCLI(t, "--vault", dir, "log", "read")
		for _, s := range acked {
			if !strings.Contains(out, s+"\n") && !strings.Contains(out, s+" ") {
				t.Errorf("%s lost the acknowledged entry %q:\n%s", filepath.Base(dir), s, out)
			}
		}
		mustCLI(t, "--vault", dir, "log", "verify")
		if code, _, out := doctorExit(t, dir); code != 0 {
			t.Errorf("doctor on %s: exit %d\n%s", filepath.Base(dir), code, out)
		}
	}
}

// spacedClock plays appends made seconds apart, as a person's are, where
// the test makes them within one second: after each command, the files it
// changed get the next time of a clock that steps 3 seconds, ahead of the
// real one.
type spacedClock struct{ next time.Time }

func (c *spacedClock) run(t *testing.T, dir string, args ...string) {
	t.Helper()
	before := mtimes(t, dir)
	mustCLI(t, args...)
	for p, mt := range mtimes(t, dir) {
		if old, ok := before[p]; !ok || !old.Equal(mt) {
			if err := os.Chtimes(p, c.next, c.next); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.next = c.next.Add(3 * time.Second)
}

// mtimes maps each regular file under dir to its modification time.
func mtimes(t *testing.T, dir string) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if info, err := d.Info(); err == nil && d.Type().IsRegular() {
			out[p] = info.ModTime()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func doctorExit(t *testing.T, dir string) (int, string, string) {
	t.Helper()
	code, out, errs := logCLI(t, "", "--vault", dir, "doctor")
	return code, errs, out
}
