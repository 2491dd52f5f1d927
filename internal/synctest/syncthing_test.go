//go:build sync

package synctest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// syncthing is one Syncthing instance on 127.0.0.1, with its own home
// folder, sharing one folder (the vault) with its peer. Discovery, relays,
// NAT traversal, usage reporting, crash reporting and upgrades are off; the
// GUI/REST API listens on a free loopback port.
type syncthing struct {
	t      *testing.T
	m      *machine
	home   string
	id     string // device ID
	listen int    // sync protocol port
	gui    int    // REST port
	apikey string
	cmd    *exec.Cmd
	logf   *os.File
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

var deviceIDLine = regexp.MustCompile(`Device ID: ([A-Z0-9-]{63})`)

func newSyncthing(t *testing.T, m *machine) *syncthing {
	t.Helper()
	bin, err := exec.LookPath("syncthing")
	if err != nil {
		t.Fatalf("syncthing is not installed (apt-get install syncthing): %v", err)
	}
	s := &syncthing{t: t, m: m, home: filepath.Join(filepath.Dir(m.vault), "syncthing-"+m.name),
		listen: freePort(t), gui: freePort(t), apikey: "nexus-test-key-" + m.name}
	out := m.runIn(filepath.Dir(m.vault), nil, bin, "generate", "--home", s.home, "--no-default-folder", "--skip-port-probing")
	match := deviceIDLine.FindStringSubmatch(out)
	if match == nil {
		out = m.runIn(filepath.Dir(m.vault), nil, bin, "serve", "--home", s.home, "--device-id")
		match = []string{"", strings.TrimSpace(out)}
	}
	s.id = match[1]
	return s
}

// configure writes the instance's config.xml: the vault folder shared with
// peer, everything that reaches beyond 127.0.0.1 off.
func (s *syncthing) configure(peer *syncthing) {
	s.t.Helper()
	cfg := fmt.Sprintf(`<configuration version="36">
    <folder id="vault" label="vault" path="%s" type="sendreceive" rescanIntervalS="3600" fsWatcherEnabled="true" fsWatcherDelayS="1" ignorePerms="false" autoNormalize="true">
        <filesystemType>basic</filesystemType>
        <device id="%s" introducedBy=""></device>
        <device id="%s" introducedBy=""></device>
        <minDiskFree unit="%%">0</minDiskFree>
        <versioning></versioning>
        <maxConflicts>10</maxConflicts>
    </folder>
    <device id="%s" name="%s" compression="metadata" introducer="false">
        <address>tcp://127.0.0.1:%d</address>
    </device>
    <device id="%s" name="%s" compression="metadata" introducer="false">
        <address>tcp://127.0.0.1:%d</address>
    </device>
    <gui enabled="true" tls="false" debugging="false">
        <address>127.0.0.1:%d</address>
        <apikey>%s</apikey>
    </gui>
    <options>
        <listenAddress>tcp://127.0.0.1:%d</listenAddress>
        <globalAnnounceEnabled>false</globalAnnounceEnabled>
        <localAnnounceEnabled>false</localAnnounceEnabled>
        <relaysEnabled>false</relaysEnabled>
        <natEnabled>false</natEnabled>
        <urAccepted>-1</urAccepted>
        <urSeen>3</urSeen>
        <autoUpgradeIntervalH>0</autoUpgradeIntervalH>
        <startBrowser>false</startBrowser>
        <crashReportingEnabled>false</crashReportingEnabled>
        <reconnectionIntervalS>1</reconnectionIntervalS>
        <minHomeDiskFree unit="%%">0</minHomeDiskFree>
        <setLowPriority>false</setLowPriority>
    </options>
</configuration>
`, s.m.vault, s.id, peer.id, s.id, s.m.name, s.listen, peer.id, peer.m.name, peer.listen, s.gui, s.apikey, s.listen)
	if err := os.WriteFile(filepath.Join(s.home, "config.xml"), []byte(cfg), 0o600); err != nil {
		s.t.Fatal(err)
	}
	// The folder marker Syncthing expects at the folder's root.
	if err := os.MkdirAll(filepath.Join(s.m.vault, ".stfolder"), 0o755); err != nil {
		s.t.Fatal(err)
	}
}

func (s *syncthing) start() {
	s.t.Helper()
	logf, err := os.Create(filepath.Join(s.home, "test.log"))
	if err != nil {
		s.t.Fatal(err)
	}
	s.logf = logf
	cmd := exec.Command("syncthing", "serve", "--home", s.home, "--no-browser", "--no-restart", "--no-upgrade", "--no-default-folder")
	cmd.Env = append(s.m.env(), "STNODEFAULTFOLDER=1", "STNOUPGRADE=1", "STNORESTART=1")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.cmd = cmd
	s.t.Cleanup(s.stop)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := s.get("/rest/system/status"); err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("syncthing %s did not answer within 60s; log:\n%s", s.m.name, s.log())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (s *syncthing) log() string {
	data, _ := os.ReadFile(filepath.Join(s.home, "test.log"))
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}

// stop ends the instance: SIGTERM, then SIGKILL to its process group after
// 10 seconds.
func (s *syncthing) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	s.cmd = nil
	s.logf.Close()
}

func (s *syncthing) request(method, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, fmt.Sprintf("http://127.0.0.1:%d%s", s.gui, path), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-API-Key", s.apikey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return body, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, body)
	}
	return body, nil
}

func (s *syncthing) get(path string) ([]byte, error) { return s.request(http.MethodGet, path) }

func (s *syncthing) post(path string) {
	s.t.Helper()
	if _, err := s.request(http.MethodPost, path); err != nil {
		s.t.Fatalf("syncthing %s: %v", s.m.name, err)
	}
}

// idle reports whether the instance is connected to peer, has scanned and
// pulled everything, and knows the peer has everything.
func (s *syncthing) idle(peer *syncthing) bool {
	var st struct {
		State         string `json:"state"`
		NeedTotal     int    `json:"needTotalItems"`
		PullErrors    int    `json:"pullErrors"`
		InSyncFiles   int    `json:"inSyncFiles"`
		GlobalFiles   int    `json:"globalFiles"`
		ReceiveOnlyCh int    `json:"receiveOnlyTotalItems"`
	}
	body, err := s.get("/rest/db/status?folder=vault")
	if err != nil || json.Unmarshal(body, &st) != nil || st.State != "idle" || st.NeedTotal != 0 {
		return false
	}
	var comp struct {
		Completion float64 `json:"completion"`
		NeedItems  int     `json:"needItems"`
	}
	body, err = s.get("/rest/db/completion?folder=vault&device=" + peer.id)
	if err != nil || json.Unmarshal(body, &comp) != nil {
		return false
	}
	var conns struct {
		Connections map[string]struct {
			Connected bool `json:"connected"`
		} `json:"connections"`
	}
	body, err = s.get("/rest/system/connections")
	if err != nil || json.Unmarshal(body, &conns) != nil || !conns.Connections[peer.id].Connected {
		return false
	}
	return comp.Completion == 100 && comp.NeedItems == 0
}

// settle waits until both copies are in sync, identical, free of
// unhandled conflict copies (when handled is true), and stay so for three
// seconds — the keepers on both sides have nothing left to do. It fails
// the test after limit.
func settle(t *testing.T, a, b *syncthing, limit time.Duration, handled bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	var stableSince time.Time
	var last map[string]string
	reason := ""
	for {
		a.post("/rest/db/scan?folder=vault")
		b.post("/rest/db/scan?folder=vault")
		time.Sleep(500 * time.Millisecond)
		ta, tb := a.m.tree(), b.m.tree()
		ok := true
		switch {
		case !a.idle(b) || !b.idle(a):
			ok, reason = false, "syncthing still syncing"
		case diffTrees(ta, tb) != "":
			ok, reason = false, "copies differ:\n"+diffTrees(ta, tb)
		case handled && len(a.m.leftovers())+len(b.m.leftovers()) > 0:
			ok, reason = false, fmt.Sprintf("conflict copies left: a %v, b %v", a.m.leftovers(), b.m.leftovers())
		case last != nil && diffTrees(last, ta) != "":
			ok, reason = false, "still changing:\n"+diffTrees(last, ta)
		}
		last = ta
		if !ok {
			stableSince = time.Time{}
		} else if stableSince.IsZero() {
			stableSince = time.Now()
		} else if time.Since(stableSince) >= 3*time.Second {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the copies did not settle within %s: %s\nsyncthing a:\n%s\nsyncthing b:\n%s", limit, reason, a.log(), b.log())
		}
	}
}

// connected reports whether the instance is connected to peer.
func (s *syncthing) connected(peer *syncthing) bool {
	var conns struct {
		Connections map[string]struct {
			Connected bool `json:"connected"`
		} `json:"connections"`
	}
	body, err := s.get("/rest/system/connections")
	if err != nil || json.Unmarshal(body, &conns) != nil {
		s.t.Fatalf("syncthing %s: connections: %v %s", s.m.name, err, body)
	}
	return conns.Connections[peer.id].Connected
}

// waitFor polls cond until it holds, and fails the test after limit,
// with what the optional logs say.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool, logs ...func() string) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, l := range logs {
				b.WriteString(l())
			}
			t.Fatalf("timed out after %s waiting for %s\n%s", limit, what, b.String())
		}
	}
}

// writeNewer writes rel as write does, then dates it after other's copy
// of it, so that a sync engine takes this save for the newer one without
// the test waiting for the clock to move on.
func (m *machine) writeNewer(rel, data string, other *machine) {
	m.t.Helper()
	m.write(rel, data)
	st, err := os.Stat(other.path(rel))
	if err != nil {
		m.t.Fatal(err)
	}
	if mine, err := os.Stat(m.path(rel)); err == nil && mine.ModTime().After(st.ModTime().Add(time.Second)) {
		return
	}
	newer := st.ModTime().Add(2 * time.Second)
	if err := os.Chtimes(m.path(rel), newer, newer); err != nil {
		m.t.Fatal(err)
	}
}

// watch runs 'nexus watch' on the machine (its keeper handles conflict
// copies and decisions made in Obsidian) until the test ends.
func (m *machine) watch() {
	m.t.Helper()
	logf, err := os.Create(filepath.Join(filepath.Dir(m.vault), "watch-"+m.name+".log"))
	if err != nil {
		m.t.Fatal(err)
	}
	cmd := exec.Command(nexus(m.t), "--vault", m.vault, "watch")
	cmd.Env = m.env()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() {
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		logf.Close()
	})
}

func (m *machine) watchLog() string {
	data, _ := os.ReadFile(filepath.Join(filepath.Dir(m.vault), "watch-"+m.name+".log"))
	return string(data)
}

// TestSyncthingTwoMachines: two copies kept in step by two real Syncthing
// instances, each machine running 'nexus watch'. While the machines cannot
// reach each other, an agent writes memory on one, and a person edits the
// same MEMORY.md, decides a review in Obsidian and edits IDENTITY.md on
// the other (the first machine's person edits them too). Once they
// reconnect, Syncthing leaves conflict copies; the keepers merge them.
// Afterwards both copies are identical, no conflict copy is left outside
// review/archive/conflicts/, every memory entry of both sides is there
// once, the decision was carried out once, and the IDENTITY.md conflict
// waits for a person as one item on both machines.
func TestSyncthingTwoMachines(t *testing.T) {
	root := t.TempDir()
	a := newMachine(t, "a", filepath.Join(root, "a", "vault"))
	b := newMachine(t, "b", filepath.Join(root, "b", "vault"))
	for _, m := range []*machine{a, b} {
		os.MkdirAll(filepath.Dir(m.vault), 0o755)
		m.runIn(filepath.Dir(m.vault), nil, nexus(t), "init", m.vault)
	}
	const (
		baseEntry   = "base: the staging host is stg-1"
		agentEntry  = "A: the API listens on port 8443"
		personEntry = "B: Ann prefers answers in Korean first"
	)
	a.nx("agent", "add", "lyra", "--role", "deploys")
	a.nx("agent", "add", "ella", "--role", "reviews")
	a.nx("--agent", "lyra", "memory", "add", baseEntry)
	var staged struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(a.nx("--agent", "ella", "--json", "retain", "--type", "project", "Deploys happen on Tuesdays")), &staged); err != nil {
		t.Fatal(err)
	}

	localProbes := []string{".nexus/keys/lyra.key", ".nexus/state/probe-a", ".nexus/index/probe-a", "log/timeline.local.md", "projects/.plan.md.tmp-1"}
	for _, p := range localProbes[1:] {
		a.write(p, "machine a's own")
	}

	sa, sb := newSyncthing(t, a), newSyncthing(t, b)
	sa.configure(sb)
	sb.configure(sa)
	sa.start()
	sb.start()
	settle(t, sa, sb, 90*time.Second, true)
	for _, p := range localProbes {
		if !a.exists(p) || b.exists(p) {
			t.Fatalf("%s is machine-local but travelled (or is missing on a)", p)
		}
	}
	if !b.exists("agents/lyra/MEMORY.md") || !b.exists("review/pending/"+staged.ID+".md") {
		t.Fatal("the vault did not reach b")
	}
	a.watch()
	b.watch()

	// The machines lose each other.
	sa.post("/rest/system/pause?device=" + sb.id)
	sb.post("/rest/system/pause?device=" + sa.id)
	waitFor(t, "the machines to lose each other", time.Minute, func() bool {
		return !sa.connected(sb) && !sb.connected(sa)
	})

	memPath, idPath := "agents/lyra/MEMORY.md", "agents/ella/IDENTITY.md"
	pending := "review/pending/" + staged.ID + ".md"
	// Machine a: an agent writes memory; a person edits ella's identity
	// and the proposal's text.
	a.nx("--agent", "lyra", "memory", "add", agentEntry)
	a.write(idPath, strings.Replace(a.read(idPath), "## Priorities\n(none yet)", "## Priorities\n- keep reviews short", 1))
	a.write(pending, strings.Replace(a.read(pending), "Deploys happen on Tuesdays\n", "Deploys happen on Tuesdays, before noon\n", 1))
	// Machine b, in Obsidian: a person adds to lyra's memory, approves
	// the proposal, edits ella's identity differently.
	// b's saves of the files both edit are the newer ones.
	b.writeNewer(memPath, b.read(memPath)+"\n§\n"+personEntry, a)
	b.write(pending, strings.Replace(b.read(pending), "status: pending", "status: approved", 1))
	b.writeNewer(idPath, strings.Replace(b.read(idPath), "## Priorities\n(none yet)", "## Priorities\n- never merge on Fridays", 1), a)
	// b's keeper carries out the approval before the machines meet again.
	waitFor(t, "b's keeper to carry out the approval", time.Minute, func() bool {
		facts, _ := filepath.Glob(b.path("agents/ella/memory/deploys-happen-on-tuesdays*.md"))
		return len(facts) == 1 && !b.exists(pending) && b.exists("review/archive/"+staged.ID+".md")
	}, b.watchLog)

	// They find each other again.
	sa.post("/rest/system/resume?device=" + sb.id)
	sb.post("/rest/system/resume?device=" + sa.id)
	settle(t, sa, sb, 3*time.Minute, true)

	for _, m := range []*machine{a, b} {
		got := m.memoryEntries("lyra")
		slices.Sort(got)
		want := []string{agentEntry, personEntry, baseEntry}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: MEMORY.md entries %q, want %q\nwatch log:\n%s", m.name, got, want, m.watchLog())
		}
		facts, _ := filepath.Glob(m.path("agents/ella/memory/deploys-happen-on-tuesdays*.md"))
		if len(facts) != 1 || m.exists(pending) || !m.exists("review/archive/"+staged.ID+".md") {
			t.Errorf("%s: approval carried out as %v, pending still there: %v", m.name, facts, m.exists(pending))
		}
		n := 0
		for _, kind := range m.pendingItems() {
			if kind == "conflict:"+idPath {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d conflict items for %s, want 1 (%v)", m.name, n, idPath, m.pendingItems())
		}
		for _, f := range m.doctorFindings("conflicts", "ignore-rules", "review", "config") {
			if !strings.Contains(f, "conflicts note:") {
				t.Errorf("%s: doctor: %s", m.name, f)
			}
		}
		// Both sides' versions are kept in the archive.
		// Both sides' versions are kept in the archive: the conflict
		// copies of MEMORY.md and IDENTITY.md, and the proposal whose
		// text a edited while b decided it (Syncthing brought the edited
		// pending file back beside the archived decision).
		for _, rel := range []string{"agents/lyra/MEMORY.sync-conflict-*.md", "agents/ella/IDENTITY.sync-conflict-*.md", "review/pending/" + staged.ID + "*.md"} {
			if got, _ := filepath.Glob(m.path("review/archive/conflicts/" + rel)); len(got) != 1 {
				t.Errorf("%s: archived %s: %v", m.name, rel, got)
			}
		}
		if got := m.read("review/archive/conflicts/review/pending/" + staged.ID + ".md"); !strings.Contains(got, "before noon") {
			t.Errorf("%s: the archived pending version is not a's edit:\n%s", m.name, got)
		}
	}
	if !bytes.Equal([]byte(a.read(memPath)), []byte(b.read(memPath))) {
		t.Error("MEMORY.md differs between the machines")
	}
}
