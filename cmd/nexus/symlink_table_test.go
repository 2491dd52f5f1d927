//go:build !lite && !windows

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outsideMarker is the text of every file outside the vault the links
// below lead to: no command may show it.
const outsideMarker = "OUTSIDE-THE-VAULT-a9f3"

// TestSymlinkTable is the symlink table of issue 30: each vault path
// replaced by a link to a file outside, a folder outside and "/", then
// serve (stdio: start and one tool call; its keeper runs once before it
// ends), watch (start; its keeper's first run ends before it does) and the
// CLI commands run. None may panic, change a byte outside the vault, or
// print the bytes of a file outside; each either says what is wrong or
// passes over the link.
func TestSymlinkTable(t *testing.T) {
	t.Setenv("NEXUS_AGENT", "")
	t.Setenv("NEXUS_REVIEWER", "ada")
	base := logVault(t)
	seed := func(args ...string) {
		t.Helper()
		if code, _, e := logCLI(t, "", append([]string{"--vault", base, "--agent", "ella"}, args...)...); code != 0 {
			t.Fatalf("%v: %s", args, e)
		}
	}
	seed("memory", "add", "seed entry")
	seed("memory", "add", "--target", "user", "likes tea")
	seed("log", "append", "seed log entry")
	seed("fact", "write", "--name", "seed fact", "--type", "project", "--description", "d", "body")
	seed("checkpoint", "save", "--task", "seed task")
	seed("retain", "--type", "project", "--name", "pending", "a pending proposal")
	month := ""
	if des, err := os.ReadDir(filepath.Join(base, "log", "live")); err == nil && len(des) > 0 {
		month = "log/live/" + des[0].Name()
	}
	paths := []string{
		"agents/ella/MEMORY.md", "agents/ella/USER.md", "agents/ella/IDENTITY.md",
		"agents/ella/memory/INDEX.md", "agents/ella/memory/seed-fact.md", "agents/ella/memory",
		"agents/ella/checkpoints", "agents/ella", month, "log/live", "review",
		".nexus/state", ".nexus/keys", ".nexus/config.yaml",
	}
	for _, rel := range paths {
		for _, target := range []string{"file", "folder", "/"} {
			t.Run(rel+"→"+target, func(t *testing.T) {
				symlinkCase(t, base, rel, target)
			})
		}
	}
}

func symlinkCase(t *testing.T, base, rel, target string) {
	dir := filepath.Join(t.TempDir(), "vault")
	if err := copyTree(base, dir); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	for _, name := range []string{"MEMORY.md", "USER.md", "IDENTITY.md", "INDEX.md", "CURRENT.md", "seed-fact.md", "config.yaml", "ella.key", "secret.md"} {
		if err := os.WriteFile(filepath.Join(outside, name), []byte(outsideMarker+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	to := map[string]string{"file": filepath.Join(outside, "secret.md"), "folder": outside, "/": "/"}[target]
	link := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.RemoveAll(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(to, link); err != nil {
		t.Fatal(err)
	}
	before := outsideState(t, outside)
	check := func(what, out string) {
		t.Helper()
		if strings.Contains(out, "panic") || strings.Contains(out, "goroutine ") {
			t.Errorf("%s panicked:\n%.600s", what, out)
		}
		if strings.Contains(out, outsideMarker) {
			t.Errorf("%s shows a file outside the vault:\n%.600s", what, out)
		}
	}
	for _, args := range [][]string{
		{"--agent", "ella", "prompt"},
		{"--agent", "lyra", "prompt"},
		{"--agent", "ella", "log", "append", "probe"},
		{"--agent", "ella", "log", "read", "--last", "20"},
		{"log", "verify"},
		{"--agent", "ella", "memory", "show"},
		{"--agent", "ella", "memory", "add", "probe entry"},
		{"--agent", "ella", "fact", "write", "--name", "probe", "--type", "project", "--description", "d", "probe body"},
		{"--agent", "ella", "fact", "read", "seed fact"},
		{"--agent", "ella", "checkpoint", "save", "--task", "probe"},
		{"--agent", "ella", "decide", "--decision", "probe", "probe title"},
		{"review", "list"},
		{"search", "seed"},
		{"doctor"},
	} {
		_, out, errs := logCLI(t, "", append([]string{"--vault", dir}, args...)...)
		check(strings.Join(args, " "), out+errs)
	}
	check("serve", serveOnce(t, dir))
	check("watch", watchOnce(t, dir))
	if after := outsideState(t, outside); after != before {
		t.Errorf("a file outside the vault changed:\nbefore %s\nafter  %s", before, after)
	}
}

// serveOnce runs 'nexus serve --stdio' in-process for one tool call and
// returns what it wrote. Its keeper's first run ends before it returns.
func serveOnce(t *testing.T, dir string) string {
	t.Helper()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory","arguments":{"action":"add","content":"served"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"seed"}}}`,
	}, "\n") + "\n"
	_, out, errs := logCLI(t, in, "--vault", dir, "--agent", "ella", "serve", "--stdio")
	return out + errs
}

// watchOnce starts 'nexus watch' in-process, stops it once it says it
// watches, and returns what it wrote.
func watchOnce(t *testing.T, dir string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var out strings.Builder
	go func() {
		done <- run(ctx, []string{"--vault", dir, "watch"}, strings.NewReader(""), &out, pw)
		pw.Close()
	}()
	var errs strings.Builder
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		errs.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "Watching ") {
			cancel()
		}
	}
	<-done
	return out.String() + errs.String()
}

// outsideState is every name, size and content under dir, in one string.
func outsideState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		data, _ := os.ReadFile(p)
		fmt.Fprintf(&b, "%s:%q;", strings.TrimPrefix(p, dir), data)
		return nil
	})
	return b.String()
}
