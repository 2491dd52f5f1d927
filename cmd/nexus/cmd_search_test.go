package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
