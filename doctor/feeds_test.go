package doctor

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

// copy is one machine's copy of a vault in the feeds tests.
type copyOf struct {
	v   *vault.Vault
	l   *livelog.Log
	now *time.Time // the clock appends are stamped with
}

var feedT0 = time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)

// newMachine makes a vault with agents lyra and ella on device.
func newMachine(t *testing.T, device string) *copyOf {
	t.Helper()
	v, _, err := vault.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := v.SetDevice(device); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"lyra", "ella"} {
		if _, err := agents.Add(v, n, n+" role", feedT0); err != nil {
			t.Fatal(err)
		}
	}
	return openCopy(t, v)
}

func openCopy(t *testing.T, v *vault.Vault) *copyOf {
	t.Helper()
	now := feedT0
	m := &copyOf{v: v, now: &now}
	l, err := livelog.Open(v, livelog.Options{Now: func() time.Time { *m.now = m.now.Add(time.Second); return *m.now }})
	if err != nil {
		t.Fatal(err)
	}
	m.l = l
	return m
}

// cloneMachine copies m to a new folder as a second computer would get
// it: everything but keys and state (unless withKeys: a key file that
// travelled), then names its device.
func cloneMachine(t *testing.T, m *copyOf, device string, withKeys bool) *copyOf {
	t.Helper()
	dir := t.TempDir()
	copyFiles(t, m.v.Root(), dir, func(rel string) bool {
		return !strings.HasPrefix(rel, vault.StateDir) && (withKeys || !strings.HasPrefix(rel, vault.KeysDir)) && !strings.HasPrefix(rel, vault.DevicesDir)
	})
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.SetDevice(device); err != nil {
		t.Fatal(err)
	}
	o := openCopy(t, v)
	*o.now = *m.now
	return o
}

// syncTo carries what a sync tool carries from m to o: the log and the
// agents' IDENTITY.md files, replacing o's. The device claims
// (log/devices/) stay behind, here and in cloneMachine: these machines play
// an older Nexus that let two machines share a name, so that what doctor
// says of such a vault is tested (devices_test.go tests the claims).
func (m *copyOf) syncTo(t *testing.T, o *copyOf) {
	t.Helper()
	copyFiles(t, m.v.Root(), o.v.Root(), func(rel string) bool {
		if strings.HasPrefix(rel, vault.DevicesDir) {
			return false
		}
		return rel == "log" || strings.HasPrefix(rel, "log/") || rel == "agents" ||
			strings.HasPrefix(rel, "agents/") && (strings.Count(rel, "/") == 1 || strings.HasSuffix(rel, "/IDENTITY.md"))
	})
	if m.now.After(*o.now) {
		*o.now = *m.now
	}
}

func copyFiles(t *testing.T, from, to string, keep func(rel string) bool) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if !keep(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		st, _ := d.Info()
		return os.WriteFile(filepath.Join(to, rel), data, st.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (m *copyOf) append(t *testing.T, agent, summary string) livelog.Entry {
	t.Helper()
	e, err := m.l.Append(agent, livelog.Entry{Summary: summary})
	if errors.Is(err, identity.ErrKeyMissing) {
		// A machine that shares a device name finds a key listed for it
		// and none here: signing refuses until one is made on purpose,
		// as the people of these scenarios did.
		d, derr := m.v.Device()
		if derr != nil {
			t.Fatal(derr)
		}
		if _, err := identity.NewDeviceKey(m.v, agent, d, *m.now); err != nil {
			t.Fatal(err)
		}
		e, err = m.l.Append(agent, livelog.Entry{Summary: summary})
	}
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func runAt(t *testing.T, m *copyOf, now time.Time) *Report {
	t.Helper()
	rep, err := Run(context.Background(), m.v.Root(), Options{LockWait: 20 * time.Millisecond, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// only fails unless the report's findings are exactly those wanted, by
// check, severity and a fragment of the problem.
func only(t *testing.T, rep *Report, want ...[3]string) {
	t.Helper()
	got := rep.Findings()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = got[i].Check == want[i][0] && string(got[i].Severity) == want[i][1] && strings.Contains(got[i].Problem, want[i][2])
	}
	if !ok {
		var b strings.Builder
		for _, f := range got {
			b.WriteString("\n  " + f.Check + " " + string(f.Severity) + " " + f.Path + ": " + f.Problem + "\n    fix: " + f.Fix)
		}
		t.Fatalf("findings:%s\nwant %q", b.String(), want)
	}
	for _, f := range got {
		if f.Fix == "" {
			t.Errorf("%s finding has no fix", f.Check)
		}
	}
}

// TestFeedChecksTwoHealthyMachines: two machines with their own names and
// keys, appending and syncing both ways: nothing to report.
func TestFeedChecksTwoHealthyMachines(t *testing.T) {
	a := newMachine(t, "vps")
	a.append(t, "lyra", "a1")
	b := cloneMachine(t, a, "laptop", false)
	b.append(t, "ella", "b1")
	b.append(t, "lyra", "b2")
	b.syncTo(t, a)
	a.append(t, "lyra", "a2")
	a.syncTo(t, b)
	// A machine renamed: its old feeds are its own, signed with its key.
	if err := a.v.SetDevice("vps2"); err != nil {
		t.Fatal(err)
	}
	a = openCopy(t, a.v)
	*a.now = feedT0.Add(time.Hour)
	a.append(t, "lyra", "after the rename")
	a.syncTo(t, b)
	// Each machine holds keys of lyra and ella: the other machine's
	// devices are new writers there until a person accepts them.
	only(t, runAt(t, a, feedT0.Add(2*time.Hour)),
		[3]string{"log", "problem", "entry of ella@laptop is not shown as intact (new writer"},
		[3]string{"log", "problem", "entry of lyra@laptop is not shown as intact (new writer"})
	for _, w := range []string{"ella@laptop", "lyra@laptop"} {
		if _, err := a.l.Trust(w); err != nil {
			t.Fatal(err)
		}
	}
	// B saw lyra@vps's entries before it made a key of lyra: pinned on
	// first use.
	for _, m := range []*copyOf{a, b} {
		only(t, runAt(t, m, feedT0.Add(2*time.Hour)))
	}
}

// TestForkCheck: one agent appending on two machines under one device
// name, the branches merged by git (both sides kept): the forks check
// reports the feed once, the log check leaves it to forks, and the second
// key listed for the device name is reported.
func TestForkCheck(t *testing.T) {
	a := newMachine(t, "box")
	a.append(t, "lyra", "on A 1")
	b := cloneMachine(t, a, "box", false) // wrongly the same name
	a.append(t, "lyra", "on A 2")
	a.append(t, "lyra", "on A 3")
	b.append(t, "lyra", "on B 2")
	b.append(t, "lyra", "on B 3")
	// Syncthing keeps both versions: the other as a conflict copy beside.
	rel := livelog.FeedPath("lyra@box", feedT0)
	dataB, _ := os.ReadFile(b.v.MustPath(rel))
	conflict := strings.TrimSuffix(rel, ".md") + ".sync-conflict-20261103-090000-ABCDEFG.md"
	if err := os.WriteFile(a.v.MustPath(conflict), dataB, 0o644); err != nil {
		t.Fatal(err)
	}
	// IDENTITY.md merged: B listed its key for box too.
	idB, _ := os.ReadFile(b.v.MustPath(identity.IdentityPath("lyra")))
	os.WriteFile(a.v.MustPath(identity.IdentityPath("lyra")), idB, 0o644)
	a.append(t, "lyra", "on A 4") // lists A's key for box again
	rep := runAt(t, a, feedT0.Add(time.Hour))
	only(t, rep,
		[3]string{"conflicts", "problem", "the same writer appended on two machines"},
		[3]string{"forks", "problem", "the feed of lyra@box has two branches: entries #2-3 exist twice"},
		// What is in lyra@box.md here is all A's: the fork says the rest.
		[3]string{"device-name", "note", `lists 2 keys for device "box"`},
	)
	for _, f := range findingsOf(rep, "log") {
		t.Errorf("log check repeats the fork: %+v", f)
	}
}

// TestDeviceNameTwoMachines: two machines named alike take turns on one
// feed through a sync tool, never forking: each sees entries it did not
// append in its own feed, and the two keys' signatures take turns.
func TestDeviceNameTwoMachines(t *testing.T) {
	a := newMachine(t, "box")
	a.append(t, "lyra", "A 1")
	b := cloneMachine(t, a, "box", false)
	b.append(t, "lyra", "B 2")
	b.syncTo(t, a)
	a.append(t, "lyra", "A 3") // A now lists its key for box too
	a.syncTo(t, b)
	b.append(t, "lyra", "B 4")
	b.syncTo(t, a)
	a.append(t, "lyra", "A 5")
	a.syncTo(t, b)
	later := feedT0.Add(time.Hour)
	only(t, runAt(t, a, later),
		[3]string{"log", "problem", "entries of lyra@box are not shown as intact (key changed"},
		[3]string{"device-name", "problem", "take turns between them"})
	only(t, runAt(t, b, later),
		// B cannot tell ella's key, made on A under "box", from its own lost.
		[3]string{"key-pair", "problem", "agent ella has no private key"},
		[3]string{"log", "problem", "of lyra@box"},
		[3]string{"device-name", "problem", `1 entry of lyra@box (#5, from`},
		[3]string{"device-name", "problem", "take turns between them"})
}

// TestCitesCheck: an entry citing another feed's entry that has not
// arrived is a note for a day, then a problem; once the feed arrives,
// nothing.
func TestCitesCheck(t *testing.T) {
	a := newMachine(t, "vps")
	a.append(t, "lyra", "a1")
	a.append(t, "lyra", "a2")
	b := cloneMachine(t, a, "laptop", false)
	cited := b.append(t, "ella", "b1 (cites lyra@vps#2)")
	if len(cited.Cites) != 1 || cited.Cites[0].Writer != "lyra@vps" {
		t.Fatalf("cites %+v", cited.Cites)
	}
	// A third machine gets ella's feed before lyra's.
	c := cloneMachine(t, a, "desk", false)
	os.RemoveAll(c.v.MustPath("log"))
	copyFiles(t, b.v.Root(), c.v.Root(), func(rel string) bool {
		return rel == "log" || strings.HasPrefix(rel, "log/") && !strings.Contains(rel, "lyra@vps") ||
			rel == "agents" || strings.HasPrefix(rel, "agents/") && (strings.Count(rel, "/") == 1 || strings.HasSuffix(rel, "/IDENTITY.md"))
	})
	only(t, runAt(t, c, cited.Time.Add(10*time.Minute)),
		[3]string{"cites", "note", "lyra@vps up to #2, cited by 1 entry of ella@laptop (the first 10 min ago"})
	rep := runAt(t, c, cited.Time.Add(72*time.Hour))
	only(t, rep, [3]string{"cites", "problem", "never arrived on this machine"})
	if rep.OK {
		t.Fatal("a cited entry missing for 3 days must fail doctor")
	}
	copyFiles(t, a.v.Root(), c.v.Root(), func(rel string) bool {
		return rel == "log" || rel == "log/live" || strings.HasPrefix(rel, "log/live/") && !strings.Contains(rel[len("log/live/"):], "/") || strings.Contains(rel, "lyra@vps")
	})
	only(t, runAt(t, c, cited.Time.Add(72*time.Hour)))
}

// TestSyncedKeyCheck: a key file copied to a second machine signs that
// machine's feed too: both machines say so.
func TestSyncedKeyCheck(t *testing.T) {
	a := newMachine(t, "vps")
	a.append(t, "lyra", "a1")
	b := cloneMachine(t, a, "laptop", true) // the key travelled
	b.append(t, "lyra", "b1")
	b.syncTo(t, a)
	a.append(t, "lyra", "a2")
	a.syncTo(t, b)
	later := feedT0.Add(time.Hour)
	only(t, runAt(t, a, later), [3]string{"synced-keys", "problem", `IDENTITY.md lists it as the key of device laptop`})
	// On B both keys came from A: ella's too, though B never used it.
	only(t, runAt(t, b, later),
		[3]string{"synced-keys", "problem", `private key of ella on this machine (device "laptop") is also used on another machine: IDENTITY.md lists it as the key of device vps`},
		[3]string{"synced-keys", "problem", `private key of lyra on this machine (device "laptop") is also used on another machine: IDENTITY.md lists it as the key of device vps`})
	// Where IDENTITY.md does not say (an older vault's single key, or a
	// person removed the line), the signatures in the feeds do.
	id := a.v.MustPath(identity.IdentityPath("lyra"))
	data, _ := os.ReadFile(id)
	var kept []string
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if !strings.Contains(line, "- laptop ") {
			kept = append(kept, line)
		}
	}
	os.WriteFile(id, []byte(strings.Join(kept, "")), 0o644)
	only(t, runAt(t, a, later), [3]string{"synced-keys", "problem", "it signed lyra@laptop (its newest entry, #1)"})
}

// TestStrayKeyFiles: a conflict copy of a key in .nexus/keys/ and a key
// file among the notes are found; an ordinary note named *.key.md is not.
func TestStrayKeyFiles(t *testing.T) {
	m := newMachine(t, "vps")
	key, err := os.ReadFile(m.v.MustPath(identity.KeyPath("lyra")))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(m.v.MustPath(vault.KeysDir+"/lyra.sync-conflict-20261201-101500-ABCDEFG.key"), key, 0o600)
	os.WriteFile(m.v.MustPath("agents/lyra/backup.key"), key, 0o600)
	os.WriteFile(m.v.MustPath("projects.key.md"), []byte("# how we keep keys\ned25519-private: is the prefix\n"), 0o644)
	rep := runAt(t, m, feedT0)
	only(t, rep,
		[3]string{"key-pair", "problem", "key file for lyra.sync-conflict-"},
		[3]string{"synced-keys", "problem", "a sync tool's conflict copy of a private key"},
		[3]string{"synced-keys", "problem", "outside .nexus/keys/"},
	)
}

// TestGitTrackedKey: a key forced into git is named.
func TestGitTrackedKey(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is not installed (apt-get install git): %v", err)
	}
	m := newMachine(t, "vps")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(git, append([]string{"-C", m.v.Root()}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	if _, err := vault.EnsureIgnoreRules(m.v.Root()); err != nil {
		t.Fatal(err)
	}
	run("add", "-f", vault.KeysDir+"/ella.key")
	rep := runAt(t, m, feedT0)
	only(t, rep, [3]string{"synced-keys", "problem", "git tracks this private key"})
	if f := rep.Findings()[0]; f.Path != vault.KeysDir+"/ella.key" || !strings.Contains(f.Fix, "rm --cached") {
		t.Fatalf("finding %+v", f)
	}
}

// TestDoctorRollbackAfterRead: B read lyra@vps's five entries (it never
// verified or appended); an older copy of the feed is then restored on B.
// Doctor on B names the cut, also after B appends and reads again, until
// the file is back.
func TestDoctorRollbackAfterRead(t *testing.T) {
	a := newMachine(t, "vps")
	for i := 1; i <= 5; i++ {
		a.append(t, "lyra", "a"+strconv.Itoa(i))
	}
	b := cloneMachine(t, a, "laptop", false)
	if _, err := b.l.Read(livelog.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	rel := livelog.FeedPath("lyra@vps", feedT0)
	full, err := os.ReadFile(b.v.MustPath(rel))
	if err != nil {
		t.Fatal(err)
	}
	es := livelog.ParseFeed(rel, full)
	if err := os.WriteFile(b.v.MustPath(rel), full[:es[3].Offset], 0o644); err != nil {
		t.Fatal(err)
	}
	named := func(when string) {
		t.Helper()
		rep := runAt(t, b, feedT0.Add(time.Hour))
		found := false
		for _, f := range findingsOf(rep, "log") {
			found = found || strings.Contains(f.Problem, "entries 4-5 of lyra@vps were cut off the end of its feed")
		}
		if !found || rep.OK {
			t.Fatalf("%s: doctor on B does not name the rollback: %+v", when, rep.Findings())
		}
	}
	named("right after")
	b.append(t, "ella", "b1")
	named("after an append")
	if _, err := b.l.ReadUnread("ella", true); err != nil {
		t.Fatal(err)
	}
	named("after a read")
	if err := os.WriteFile(b.v.MustPath(rel), full, 0o644); err != nil {
		t.Fatal(err)
	}
	only(t, runAt(t, b, feedT0.Add(time.Hour)))
}
