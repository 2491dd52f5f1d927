//go:build linux

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/person"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// openPTY opens a pseudo-terminal: the master, where the test types, and
// the slave, which the command gets as its stdin.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pts: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	// Drain what the terminal echoes, so that it never fills.
	go io.Copy(io.Discard, m)
	return m, s
}

// typed runs nexus with stdin a terminal on which lines are typed.
func typed(t *testing.T, dir string, lines []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	m, s := openPTY(t)
	for _, l := range lines {
		if _, err := m.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"--vault", dir}, args...), s, &out, &errb)
	return code, out.String(), errb.String()
}

func piped(t *testing.T, dir, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"--vault", dir}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

const testPass = "correct horse battery staple"

// personVault is a vault with agent lyra, ada's review key made through
// a terminal, and review.require_person_key on.
func personVault(t *testing.T) (*vault.Vault, string) {
	t.Helper()
	t.Setenv("NEXUS_AGENT", "")
	t.Setenv("NEXUS_VAULT", "")
	dir := t.TempDir()
	v, _, err := vault.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agents.Add(v, "lyra", "tester", time.Now()); err != nil {
		t.Fatal(err)
	}
	code, out, errs := typed(t, dir, []string{testPass, testPass}, "person", "init", "--name", "ada")
	if code != 0 || !strings.Contains(out, "Created review key ada, fingerprint ") {
		t.Fatalf("person init: exit %d\n%s%s", code, out, errs)
	}
	if strings.Contains(out+errs, testPass) {
		t.Fatal("person init printed the passphrase")
	}
	if err := v.UpdateConfig(func(c *vault.Config) error { c.Review.RequirePersonKey = true; return nil }); err != nil {
		t.Fatal(err)
	}
	v, err = vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return v, dir
}

func retainOne(t *testing.T, v *vault.Vault, name string) retention.Item {
	t.Helper()
	it, err := retention.Retain(v, "lyra", agents.FactInput{Name: name, Description: "about " + name, Type: "user", Body: "The body of " + name + "."}, retention.Provenance{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// noBypassHint fails when a message tells how to get past a refusal.
func noBypassHint(t *testing.T, msg string) {
	t.Helper()
	for _, hint := range []string{"NEXUS_AGENT=", "e.g.", "instead", "set review.require_person_key: false", "run it without"} {
		if strings.Contains(msg, hint) {
			t.Errorf("refusal hints at a way around it (%q): %s", hint, msg)
		}
	}
}

func TestPersonDecisionsThroughATerminal(t *testing.T) {
	v, dir := personVault(t)
	a, b := retainOne(t, v, "tea"), retainOne(t, v, "coffee")
	retainOne(t, v, "water")
	retainOne(t, v, "juice")
	cases := []struct {
		name     string
		terminal bool
		lines    []string
		args     []string
		code     int
		says     string
	}{
		{"approve, not a terminal", false, nil, []string{"review", "approve", a.ID}, 1, "not a terminal"},
		{"approve, wrong passphrase three times", true, []string{"nope nope nope", "still not it", "and not this"}, []string{"review", "approve", a.ID}, 1, "does not open"},
		{"approve as an agent", true, []string{testPass}, []string{"--agent", "lyra", "review", "approve", a.ID}, 1, "only a person"},
		{"approve", true, []string{testPass}, []string{"review", "approve", a.ID}, 0, "Approved " + a.ID},
		{"reject", true, []string{"typo first", testPass}, []string{"review", "reject", b.ID, "--why", "no"}, 0, "Rejected " + b.ID},
		{"approve --all, not a terminal", false, nil, []string{"review", "approve", "--all"}, 1, "not a terminal"},
		{"approve --all", true, []string{testPass}, []string{"review", "approve", "--all", "--only", "lyra"}, 0, "Approved 2 items"},
		{"rollback, not a terminal", false, nil, []string{"rollback", "--yes"}, 1, "not a terminal"},
		{"rollback", true, []string{testPass}, []string{"rollback", "--yes"}, 0, "Restored"},
	}
	for _, tc := range cases {
		var code int
		var out, errs string
		if tc.terminal {
			code, out, errs = typed(t, dir, tc.lines, tc.args...)
		} else {
			code, out, errs = piped(t, dir, testPass+"\n", tc.args...)
		}
		if code != tc.code || !strings.Contains(out+errs, tc.says) {
			t.Fatalf("%s: exit %d, want %d saying %q\n%s%s", tc.name, code, tc.code, tc.says, out, errs)
		}
		if strings.Contains(out+errs, testPass) {
			t.Fatalf("%s: the passphrase was printed", tc.name)
		}
		if code != 0 {
			noBypassHint(t, errs)
		}
	}
	for _, id := range []string{a.ID, b.ID} {
		it, err := retention.Get(v, id)
		if err != nil {
			t.Fatal(err)
		}
		if it.SignedBy != "ada" || retention.VerifyDecision(v, it) != nil {
			t.Fatalf("%s: signed_by %q, verify %v", id, it.SignedBy, retention.VerifyDecision(v, it))
		}
	}
}

func TestReviewSignCarriesOutAnObsidianApproval(t *testing.T) {
	v, dir := personVault(t)
	it := retainOne(t, v, "tea")
	p := v.MustPath(it.Path)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data, err = vault.SetProperty(data, "status", "approved")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// Any review command sees it, and leaves it waiting.
	code, out, errs := piped(t, dir, "", "review", "list")
	if code != 0 || !strings.Contains(errs, "waits for a person's signature") || !strings.Contains(out, it.ID) {
		t.Fatalf("review list: exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs := piped(t, dir, testPass+"\n", "review", "sign", it.ID); code != 1 || !strings.Contains(errs, "not a terminal") {
		t.Fatalf("sign without a terminal: exit %d %s", code, errs)
	} else {
		noBypassHint(t, errs)
	}
	code, out, errs = typed(t, dir, []string{testPass}, "review", "sign", it.ID)
	if code != 0 || !strings.Contains(out, "Signed "+it.ID+" (approved by ada)") {
		t.Fatalf("review sign: exit %d\n%s%s", code, out, errs)
	}
	done, err := retention.Get(v, it.ID)
	if err != nil || retention.VerifyDecision(v, done) != nil || done.Path != retention.ArchivePath(it.ID) {
		t.Fatalf("after sign: %+v %v", done, err)
	}
}

func TestPersonInitAndTrust(t *testing.T) {
	v, dir := personVault(t)
	// A second key on the same machine needs the first one's passphrase.
	if code, out, errs := typed(t, dir, []string{"wrong one here", "wrong two here", "wrong three here"}, "person", "init", "--name", "eve"); code != 1 {
		t.Fatalf("second init without the first key's passphrase: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := typed(t, dir, []string{testPass, "a different passphrase", "a different passphrase"}, "person", "init", "--name", "bob"); code != 0 {
		t.Fatalf("second init: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := typed(t, dir, []string{testPass, "twelve chars ok", "twelve chars no"}, "person", "init", "--name", "cy"); code != 2 {
		t.Fatalf("init with two different passphrases: exit %d, want 2\n%s%s", code, out, errs)
	}
	// A public key that arrived by sync is named until trusted.
	other := t.TempDir()
	ov, _, err := vault.Init(other)
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errs := typed(t, other, []string{testPass, testPass}, "person", "init", "--name", "dan"); code != 0 {
		t.Fatalf("init dan: exit %d\n%s%s", code, out, errs)
	}
	pub, err := os.ReadFile(ov.MustPath(person.PeopleDir + "/dan.pub"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v.MustPath(person.PeopleDir+"/dan.pub"), pub, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, out, _ := piped(t, dir, "", "person", "list"); !strings.Contains(out, "dan") || !strings.Contains(out, person.Unpinned) {
		t.Fatalf("person list:\n%s", out)
	}
	if code, _, errs := piped(t, dir, "y\n", "person", "trust", "dan"); code != 1 || !strings.Contains(errs, "not a terminal") {
		t.Fatalf("trust without a terminal: exit %d %s", code, errs)
	}
	if code, out, errs := typed(t, dir, []string{testPass}, "person", "trust", "dan"); code != 0 || !strings.Contains(out, "Trusted review key dan") {
		t.Fatalf("trust: exit %d\n%s%s", code, out, errs)
	}
	ps, err := person.People(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.State != person.Trusted {
			t.Errorf("%s: %s", p.Name, p.State)
		}
	}
}
