package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/vault"
)

func searchCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func searchVault(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if code, _, stderr := searchCLI(t, nil, "init", dir); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	files := map[string]string{
		"projects/staging.md":     "---\ntags: [infra]\ntype: reference\nagent: lyra\nupdated: 2026-10-05\n---\n# Staging\n\nThe staging ssh port is 2222.\n",
		"projects/deploy.md":      "---\nagent: orion\n---\n# 배포\n\n어제 배포를 시작했고 배포가 실패했다. docker was fine.\n",
		"agents/lyra/memory/f.md": "---\ntype: feedback\ntags: infra\n---\ndeploy on fridays is risky\n",
		"notes/old.md":            "---\ncreated: 2025-01-01\n---\ndeploy notes from last year\n",
	}
	for rel, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSearchCommand(t *testing.T) {
	dir := searchVault(t)
	// --agent must name an agent (a typo is an error, not "no matches").
	if code, _, stderr := searchCLI(t, nil, "--vault", dir, "search", "deploy", "--agent", "lyra"); code != exitRefused || !strings.Contains(stderr, `no agent named "lyra" in this vault`) {
		t.Fatalf("--agent of no agent: exit %d %s", code, stderr)
	}
	if code, _, stderr := searchCLI(t, nil, "--vault", dir, "agent", "add", "lyra"); code != 0 {
		t.Fatalf("agent add: %s", stderr)
	}
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		paths []string // expected hit paths, in order
	}{
		{"plain", nil, []string{"staging ssh port"}, []string{"projects/staging.md"}},
		{"korean", nil, []string{"배포", "--limit", "5"}, []string{"projects/deploy.md"}},
		{"explicit --agent filters", nil, []string{"deploy", "--agent", "lyra"}, []string{"agents/lyra/memory/f.md"}},
		{"env agent does not filter", map[string]string{"NEXUS_AGENT": "lyra"}, []string{"docker"}, []string{"projects/deploy.md"}},
		{"--by", nil, []string{"docker", "--by", "orion"}, []string{"projects/deploy.md"}},
		{"type and tag", nil, []string{"deploy", "--type", "feedback", "--tag", "infra"}, []string{"agents/lyra/memory/f.md"}},
		{"path", nil, []string{"deploy", "--path", "notes/"}, []string{"notes/old.md"}},
		{"until", nil, []string{"deploy", "--until", "2025-12-31"}, []string{"notes/old.md"}},
		{"since", nil, []string{"ssh", "--since", "2026-10-01"}, []string{"projects/staging.md"}},
		{"phrase", nil, []string{`"ssh port"`}, []string{"projects/staging.md"}},
		{"title", nil, []string{"title:staging"}, []string{"projects/staging.md"}},
		{"exclude", nil, []string{"deploy -docker -fridays"}, []string{"notes/old.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--vault", dir, "--json", "search"}, tt.args...)
			code, stdout, stderr := searchCLI(t, tt.env, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var res index.Results
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatalf("json: %v\n%s", err, stdout)
			}
			var got []string
			for _, h := range res.Hits {
				got = append(got, h.Path)
			}
			if strings.Join(got, ",") != strings.Join(tt.paths, ",") {
				t.Fatalf("hits %v, want %v", got, tt.paths)
			}
		})
	}
	// Human output: path:line, title, snippet with highlights.
	code, stdout, _ := searchCLI(t, nil, "--vault", dir, "search", "staging", "ssh")
	if code != 0 || !strings.Contains(stdout, "projects/staging.md:1  Staging") || !strings.Contains(stdout, "**ssh**") {
		t.Errorf("human output:\n%s", stdout)
	}
	code, stdout, _ = searchCLI(t, nil, "--vault", dir, "search", "zzzznothing")
	if code != 0 || !strings.Contains(stdout, "No matches") {
		t.Errorf("no match output %d:\n%s", code, stdout)
	}
	// Usage errors exit 2.
	for _, args := range [][]string{{"search"}, {"search", "x", "--since", "yesterday"}, {"search", "  "}, {"search", "x", "--path", "../up"}} {
		if code, _, stderr := searchCLI(t, nil, append([]string{"--vault", dir}, args...)...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
}

func TestSearchWhileAnotherProcessHoldsIndex(t *testing.T) {
	dir := searchVault(t)
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	holder, err := index.Open(v, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := holder.Start(ctx); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "projects", "new.md"), []byte("tamarind fresh note"), 0o644)
	holder.Notify("projects/new.md")
	code, stdout, stderr := searchCLI(t, nil, "--vault", dir, "--json", "search", "tamarind")
	if code != 0 || !strings.Contains(stdout, `"path": "projects/new.md"`) {
		t.Fatalf("exit %d %s %s", code, stdout, stderr)
	}
	code, stdout, _ = searchCLI(t, nil, "--vault", dir, "--json", "index", "status")
	var st index.Status
	if code != 0 || json.Unmarshal([]byte(stdout), &st) != nil || !st.Remote || !st.Watching || st.Files != 5 || st.Pending != 0 {
		t.Fatalf("status %d %s", code, stdout)
	}
}

func TestIndexCommands(t *testing.T) {
	dir := searchVault(t)
	code, stdout, stderr := searchCLI(t, nil, "--vault", dir, "index", "rebuild")
	if code != 0 || !strings.Contains(stdout, "Indexed 4 files") || !strings.Contains(stderr, "indexing: 4/4 files (100%)") {
		t.Fatalf("rebuild %d:\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = searchCLI(t, nil, "--vault", dir, "index", "status")
	if code != 0 || !strings.Contains(stdout, "files:       4") || !strings.Contains(stdout, "pending:     0") {
		t.Fatalf("status %d:\n%s", code, stdout)
	}
	os.Remove(filepath.Join(dir, "notes", "old.md"))
	code, stdout, _ = searchCLI(t, nil, "--vault", dir, "--json", "index", "status")
	if code != 0 || !strings.Contains(stdout, `"pending": 1`) || !strings.Contains(stdout, "notes/old.md") {
		t.Fatalf("status after delete %d:\n%s", code, stdout)
	}
	for _, c := range []string{"search", "index", "watch"} {
		code, stdout, _ := searchCLI(t, nil, c, "--help")
		if code != 0 || !strings.Contains(stdout, "Example") {
			t.Errorf("%s --help lacks an example:\n%s", c, stdout)
		}
	}
}

func TestWatchCommand(t *testing.T) {
	dir := searchVault(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var errb bytes.Buffer
	go func() {
		var out bytes.Buffer
		done <- run(ctx, []string{"--vault", dir, "watch"}, strings.NewReader(""), &out, &errb)
	}()
	// A second opener finds the index held by watch, and its search sees
	// a file written after watch started.
	v, _ := vault.Open(dir)
	var ix *index.Index
	for {
		var err error
		ix, err = index.Open(v, index.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if ix.Remote() {
			break
		}
		ix.Close() // watch has not taken it yet
	}
	defer ix.Close()
	os.WriteFile(filepath.Join(dir, "projects", "w.md"), []byte("jabuticaba"), 0o644)
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := ix.Search(ctx, index.Query{Text: "jabuticaba"})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("search via watch: %v %v", res, err)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("watch exit %d: %s", code, errb.String())
	}
}

// TestSearchReadOnlyVault searches a vault whose files this process may
// not write (as another user when the test runs as root): from the index
// on disk while it is fresh, from one built in memory once a note
// changed; nothing is written, no holder starts, and a rebuild is refused.
func TestSearchReadOnlyVault(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes do not make a folder read-only on Windows")
	}
	bin := buildBinary(t)
	dir := searchVault(t)
	if out, err := exec.Command(bin, "--vault", dir, "index", "rebuild").CombinedOutput(); err != nil {
		t.Fatalf("rebuild: %v %s", err, out)
	}
	var asReader func(args ...string) *exec.Cmd
	if os.Geteuid() == 0 {
		// Root writes anything: run as nobody, who may read the vault only.
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("running as root without setpriv to drop to another user")
		}
		for p := dir; p != "/" && p != "."; p = filepath.Dir(p) {
			if st, err := os.Stat(p); err == nil && st.Mode().Perm()&0o005 != 0o005 {
				os.Chmod(p, st.Mode().Perm()|0o005)
			}
		}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil {
				mode := os.FileMode(0o644)
				if d.IsDir() {
					mode = 0o755
				}
				os.Chmod(p, mode)
			}
			return nil
		})
		os.Chmod(bin, 0o755)
		asReader = func(args ...string) *exec.Cmd {
			return exec.Command(setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin}, args...)...)
		}
	} else {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o555)
			}
			return nil
		})
		t.Cleanup(func() {
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					os.Chmod(p, 0o755)
				}
				return nil
			})
		})
		asReader = func(args ...string) *exec.Cmd { return exec.Command(bin, args...) }
	}
	before := treeState(t, dir)
	search := func(q string) (index.Results, string) {
		t.Helper()
		cmd := asReader("--vault", dir, "--json", "search", "--hold", "10m", q)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("search %q: %v\n%s%s", q, err, out.String(), errb.String())
		}
		var res index.Results
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("search %q: %v\n%s", q, err, out.String())
		}
		return res, errb.String()
	}
	res, stderr := search("staging ssh")
	if len(res.Hits) != 1 || res.Hits[0].Path != "projects/staging.md" || strings.Contains(stderr, "in memory") {
		t.Fatalf("fresh index, read-only: %+v %s", res, stderr)
	}
	out, _ := asReader("--vault", dir, "--json", "index", "status").Output()
	var st index.Status
	if json.Unmarshal(out, &st) != nil || st.ReadOnly != "disk" || st.Pending != 0 || st.Files != 4 {
		t.Fatalf("status: %s", out)
	}
	// A person (the owner) edits a note: the read-only search is as fresh
	// as any other, from an index built in memory.
	p := filepath.Join(dir, "projects", "deploy.md")
	os.Chmod(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte("# Deploy\n\nthe wombat rollout\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before["projects/deploy.md"] = treeState(t, dir)["projects/deploy.md"]
	res, stderr = search("wombat")
	if len(res.Hits) != 1 || res.Hits[0].Path != "projects/deploy.md" || !strings.Contains(stderr, "in memory") {
		t.Fatalf("stale index, read-only: %+v %s", res, stderr)
	}
	if res, _ := search("배포"); len(res.Hits) != 0 {
		t.Fatalf("old text of the edited note found: %+v", res.Hits)
	}
	cmd := asReader("--vault", dir, "index", "rebuild")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "cannot be written") {
		t.Fatalf("rebuild of a read-only vault: %v %s", err, out)
	}
	if after := treeState(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a read-only search changed files:\n%v\n%v", before, after)
	}
}

// treeState is every file's size and mtime under dir (.nexus included).
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			info, _ := d.Info()
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = fmt.Sprint(info.Size(), info.ModTime().UnixNano())
		}
		return nil
	})
	return out
}

// TestSearchFindsHolderAcrossNetworkNamespaces runs the search in a
// network namespace of its own (loopback TCP to the holder cannot work
// there, as between two containers sharing the vault): it finds the
// holder through its socket in the vault's .nexus/index and gets the
// holder's answer.
func TestSearchFindsHolderAcrossNetworkNamespaces(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if err != nil || exec.Command(unshare, "-r", "-n", "true").Run() != nil {
		t.Skip("needs unshare -r -n (Linux user and network namespaces)")
	}
	bin := buildBinary(t)
	dir := searchVault(t)
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	holder, err := index.Open(v, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := holder.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".nexus", "index", "holder.sock")); err != nil {
		t.Fatalf("no holder socket: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "projects", "new.md"), []byte("tamarind fresh note"), 0o644)
	holder.Notify("projects/new.md")
	out, err := exec.Command(unshare, "-r", "-n", bin, "--vault", dir, "--json", "index", "status").Output()
	var st index.Status
	if err != nil || json.Unmarshal(out, &st) != nil || !st.Remote || st.HolderPID != os.Getpid() {
		t.Fatalf("status from another network namespace: %v %s", err, out)
	}
	out, err = exec.Command(unshare, "-r", "-n", bin, "--vault", dir, "--json", "search", "tamarind").Output()
	if err != nil || !strings.Contains(string(out), `"path": "projects/new.md"`) {
		t.Fatalf("search from another network namespace: %v %s", err, out)
	}
}
