//go:build !lite

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// TestSearchStartsHolder runs the real binary: a search that opens the
// index itself leaves a background 'nexus index hold' behind, the next
// search is answered by it, and it exits once nobody asks for --hold.
func TestSearchStartsHolder(t *testing.T) {
	dir := t.TempDir()
	bin := buildBinary(t)
	v, _, err := vault.Init(filepath.Join(dir, "vault"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v.Root(), "staging.md"), []byte("# Staging\n\nThe ssh port is 2222.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(env string, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--vault", v.Root(), "--json"}, args...)...)
		cmd.Env = append(os.Environ(), "NEXUS_AGENT=", env)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("nexus %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	serveJSON := filepath.Join(v.Root(), ".nexus", "index", "serve.json")
	// holderAddr is the address of a holder answering, or "": a bare TCP
	// connection, not a request, so it does not keep the holder busy.
	holderAddr := func() string {
		data, err := os.ReadFile(serveJSON)
		if err != nil {
			return ""
		}
		var info struct{ Addr string }
		if json.Unmarshal(data, &info) != nil {
			return ""
		}
		c, err := net.DialTimeout("tcp", info.Addr, time.Second)
		if err != nil {
			return ""
		}
		c.Close()
		return info.Addr
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}

	// A search starts its holder before it exits, and opens the holder's
	// log (.nexus/index/hold.log) first: when there is no log once the
	// search is done, it started none.
	holdLog := filepath.Join(v.Root(), ".nexus", "index", "hold.log")
	noHolderStarted := func(why string) {
		t.Helper()
		if _, err := os.Stat(holdLog); !errors.Is(err, fs.ErrNotExist) || holderAddr() != "" {
			t.Fatalf("a holder started %s (hold.log: %v)", why, err)
		}
	}
	// --hold 0: nobody is left holding the index.
	if out := run("", "search", "ssh", "--hold", "0"); !strings.Contains(out, `"staging.md"`) {
		t.Fatalf("search: %s", out)
	}
	noHolderStarted("with --hold 0")
	// Not on a terminal and not configured: a script leaves nothing behind.
	run("", "search", "ssh")
	noHolderStarted("for a non-interactive search")

	// holderStarted waits for a holder and makes sure it never outlives
	// the test, whatever happens.
	holderStarted := func() {
		t.Helper()
		waitFor("the holder", func() bool { return holderAddr() != "" })
		var info struct{ PID int }
		data, err := os.ReadFile(serveJSON)
		if err != nil || json.Unmarshal(data, &info) != nil || info.PID <= 0 {
			t.Fatalf("serve.json: %s %v", data, err)
		}
		t.Cleanup(func() {
			if p, err := os.FindProcess(info.PID); err == nil {
				p.Kill()
			}
		})
	}
	gone := func(addr string) func() bool {
		return func() bool {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
			}
			return err != nil
		}
	}

	// A holder starts and answers the next search. Its idle time is long:
	// on a loaded machine a short one can run out before the next search.
	run("NEXUS_SEARCH_HOLD=1h", "search", "ssh")
	if _, err := os.Stat(holdLog); err != nil {
		t.Fatalf("the search that starts a holder opened no hold.log: %v", err)
	}
	holderStarted()
	if err := os.WriteFile(filepath.Join(v.Root(), "new.md"), []byte("# New\n\nzeppelin landing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Remote bool `json:"remote"`
	}
	if err := json.Unmarshal([]byte(run("", "index", "status")), &st); err != nil || !st.Remote {
		t.Fatalf("status after a search: remote=%v (%v)", st.Remote, err)
	}
	// Answered by the holder, and current: the file written just now.
	if out := run("", "search", "zeppelin"); !strings.Contains(out, `"new.md"`) {
		t.Fatalf("search through the holder: %s", out)
	}

	// --stop ends the background holder and says so.
	addr := holderAddr()
	var stop struct {
		HolderPID int  `json:"holder_pid"`
		Stopped   bool `json:"stopped"`
	}
	if out := run("", "index", "hold", "--stop"); json.Unmarshal([]byte(out), &stop) != nil || !stop.Stopped || stop.HolderPID <= 0 {
		t.Fatalf("index hold --stop: %s", out)
	}
	if !gone(addr)() {
		t.Fatal("the holder still answers after --stop returned")
	}
	stop.HolderPID, stop.Stopped = 0, false
	if out := run("", "index", "hold", "--stop"); json.Unmarshal([]byte(out), &stop) != nil || stop.Stopped || stop.HolderPID != 0 {
		t.Fatalf("index hold --stop with no holder: %s", out)
	}

	// A holder nobody asks exits once idle (NEXUS_SEARCH_HOLD, 1.5 s
	// here). It may be gone before this test sees it answer: it shows
	// itself by writing its PID into serve.json (which it leaves behind).
	servePID := func() int {
		var info struct{ PID int }
		data, _ := os.ReadFile(serveJSON)
		json.Unmarshal(data, &info)
		return info.PID
	}
	stopped := servePID()
	run("NEXUS_SEARCH_HOLD=1500ms", "search", "ssh")
	waitFor("the holder with a short idle time", func() bool { return servePID() != stopped })
	idle := servePID()
	t.Cleanup(func() {
		if p, err := os.FindProcess(idle); err == nil {
			p.Kill()
		}
	})
	data, _ := os.ReadFile(serveJSON)
	var info struct{ Addr string }
	if err := json.Unmarshal(data, &info); err != nil {
		t.Fatal(err)
	}
	waitFor("the idle holder to exit", gone(info.Addr))

	// 'nexus watch' asks the background holder to step down and holds the
	// index itself, at once (not after the holder's idle time).
	run("NEXUS_SEARCH_HOLD=1h", "search", "ssh")
	holderStarted()
	addr = holderAddr()
	watch := exec.Command(bin, "--vault", v.Root(), "watch")
	watch.Env = append(os.Environ(), "NEXUS_AGENT=")
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { watch.Process.Kill(); watch.Wait() })
	waitFor("the holder to step down for watch", gone(addr))
	waitFor("watch to hold the index", func() bool {
		var st struct {
			HolderPID int `json:"holder_pid"`
		}
		return json.Unmarshal([]byte(run("", "index", "status")), &st) == nil && st.HolderPID == watch.Process.Pid
	})
	watch.Process.Kill()
	watch.Wait()

	// A holder whose vault is deleted exits too, idle or not. (Windows
	// does not delete a folder whose files a process holds open.)
	if runtime.GOOS == "windows" {
		return
	}
	run("NEXUS_SEARCH_HOLD=1h", "search", "ssh")
	holderStarted()
	addr = holderAddr()
	if err := os.RemoveAll(v.Root()); err != nil {
		t.Fatal(err)
	}
	waitFor("the holder of a deleted vault to exit", gone(addr))
}

// TestHolderPolicy checks when a search that opened the index itself
// leaves a background holder behind, and that the first one is explained
// once, on a terminal only.
func TestHolderPolicy(t *testing.T) {
	tests := []struct {
		name        string
		interactive bool
		flag, env   string
		config      string
		want        time.Duration // 0: no holder started
		explained   bool
	}{
		{"terminal, default", true, "", "", "", defaultHold, true},
		{"script, default", false, "", "", "", 0, false},
		{"script, --hold", false, "2m", "", "", 2 * time.Minute, false},
		{"script, env", false, "", "3m", "", 3 * time.Minute, false},
		{"script, config", false, "", "", "4m", 4 * time.Minute, false},
		{"terminal, config off", true, "", "", "off", 0, false},
		{"terminal, --hold 0 beats config", true, "0", "", "5m", 0, false},
		{"env beats config", false, "", "6m", "7m", 6 * time.Minute, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NEXUS_SEARCH_HOLD", tc.env)
			dir := searchVault(t)
			if tc.config != "" {
				cfg := filepath.Join(dir, ".nexus", "config.yaml")
				data, err := os.ReadFile(cfg)
				if err != nil {
					t.Fatal(err)
				}
				data = append(data, []byte("\nsearch:\n  hold: "+tc.config+"\n")...)
				if err := os.WriteFile(cfg, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var started []time.Duration
			var out, errb bytes.Buffer
			g := &globals{vaultDir: dir, ctx: context.Background(), stdin: strings.NewReader(""), stdout: &out, stderr: &errb, now: time.Now}
			o := searchOptions{searchFlags: searchFlags{words: []string{"staging"}, limit: 10, hold: tc.flag}, holder: holderPolicy{
				interactive: func() bool { return tc.interactive },
				start: func(v *vault.Vault, idle time.Duration) error {
					started = append(started, idle)
					return nil
				},
			}}
			for range 2 {
				if err := runSearch(g, o); err != nil {
					t.Fatal(err)
				}
			}
			switch {
			case tc.want == 0 && len(started) != 0:
				t.Fatalf("holder started (%v), want none", started)
			case tc.want != 0 && (len(started) != 2 || started[0] != tc.want):
				t.Fatalf("holders started %v, want two of %v", started, tc.want)
			}
			if n := strings.Count(errb.String(), "index hold --stop"); (n == 1) != tc.explained || n > 1 {
				t.Fatalf("explanation shown %d times, want explained=%v:\n%s", n, tc.explained, errb.String())
			}
		})
	}
}
