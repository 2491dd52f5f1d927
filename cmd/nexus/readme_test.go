package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// readmeBlock returns the lines of the first fenced code block after the
// heading (or, with heading "", the first block of the file).
func readmeBlock(t *testing.T, readme, heading string) []string {
	t.Helper()
	s := readme
	if heading != "" {
		i := strings.Index(s, "\n"+heading+"\n")
		if i < 0 {
			t.Fatalf("README.md has no heading %q", heading)
		}
		s = s[i:]
	}
	start := strings.Index(s, "\n```")
	if start < 0 {
		t.Fatalf("README.md: no code block after %q", heading)
	}
	s = s[start+4:]
	s = s[strings.Index(s, "\n")+1:] // the fence's info string (sh)
	end := strings.Index(s, "\n```")
	if end < 0 {
		t.Fatalf("README.md: code block after %q not closed", heading)
	}
	return strings.Split(s[:end], "\n")
}

// TestReadmeTour runs the README's CLI tour, taken from README.md itself,
// line by line in bash, on a fresh HOME with the binary 'go install' builds
// from this checkout: every line must exit 0, and the lines that show
// something must show it. If the README changes, this test runs the new
// text; if behaviour changes, the README must follow.
func TestReadmeTour(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and installs the binary")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the tour is a POSIX shell session")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)

	// The first two commands of the README.
	first := readmeBlock(t, readme, "")
	if len(first) != 2 || first[0] != "go run ./cmd/nexus demo" || first[1] != "go test ./..." {
		t.Fatalf("the README's first block changed: %q; update TestReadmeTour (it runs the demo line)", first)
	}

	tour := readmeBlock(t, readme, "## A short CLI tour")
	tmp := t.TempDir()
	home, bin := filepath.Join(tmp, "home"), filepath.Join(tmp, "bin")
	for _, d := range []string{home, bin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"HOME=" + home, "GOBIN=" + bin, "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "TMPDIR=" + tmp, "LANG=C.UTF-8"}
	// The Go caches live under the real HOME: keep them, or every run
	// would build the world.
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "GOTOOLCHAIN"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, k+"="+strings.TrimSpace(string(out)))
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "NEXUS_") && !strings.HasPrefix(k, "GO") && k != "HOME" && k != "PATH" && k != "TMPDIR" && k != "LANG" {
			env = append(env, kv)
		}
	}
	t.Cleanup(func() {
		// A holder left by a search would hold the vault open.
		exec.Command(filepath.Join(bin, "nexus"), "--vault", filepath.Join(home, "vault"), "index", "hold", "--stop").Run()
	})

	// One script: each line runs as written, then its exit code is checked;
	// markers split the output by line.
	var script strings.Builder
	var lines []string
	for _, l := range tour {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		if strings.HasSuffix(strings.TrimSpace(l), "\\") {
			t.Fatalf("tour line %q continues on the next: keep every command on one line", l)
		}
		n := len(lines)
		lines = append(lines, l)
		fmt.Fprintf(&script, "echo '@@@ %d'\n%s\nrc=$?; if [ $rc -ne 0 ]; then echo \"@@@ exit $rc\"; exit 1; fi\n", n, l)
	}
	cmd := exec.Command(bash, "--noprofile", "--norc", "-c", script.String())
	cmd.Dir = repo // 'go install ./cmd/nexus' runs in the checkout
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()

	outputs := map[int]string{}
	cur, failed := -1, ""
	for _, l := range strings.SplitAfter(out.String(), "\n") {
		if m := regexp.MustCompile(`^@@@ (\d+)\n$`).FindStringSubmatch(l); m != nil {
			cur, _ = strconv.Atoi(m[1])
			continue
		}
		if strings.HasPrefix(l, "@@@ exit ") {
			failed = strings.TrimSpace(strings.TrimPrefix(l, "@@@ "))
			continue
		}
		outputs[cur] += l
	}
	if runErr != nil || failed != "" {
		t.Fatalf("README tour stopped at line %q (%s):\n%s\nfix the README's tour or the behaviour it shows", lines[cur], failed, outputs[cur])
	}

	// What the lines that show something must show.
	for _, want := range []struct{ line, shows string }{
		{"nexus --version", "nexus "},
		{"nexus init ~/vault", "Initialised Nexus vault in " + filepath.Join(home, "vault")},
		{"nexus agent add ella", "Added agent ella"},
		{"log read --unread --ack", "lyra [deploy/shipped] Fixed the login timeout (로그인 시간 초과)"},
		{"nexus decide", ":D-0001: Secrets storage"},
		{"retain --type user", "for review"},
		{"nexus prompt", "Staging deploys need a green canary first"},
		{"nexus review approve", "agents/ella/memory/"},
		{`nexus search "로그인"`, "log/live/"},
		{"nexus log verify", "OK"},
		{"nexus doctor", "Vault " + filepath.Join(home, "vault")},
	} {
		found := false
		for i, l := range lines {
			if strings.Contains(l, want.line) {
				found = true
				if !strings.Contains(outputs[i], want.shows) {
					t.Errorf("README tour line %q shows:\n%s\nwant it to show %q", l, outputs[i], want.shows)
				}
			}
		}
		if !found {
			t.Errorf("the README tour has no line with %q any more: update TestReadmeTour", want.line)
		}
	}
	if o := outputs[indexOf(lines, `nexus search "로그인"`)]; strings.Contains(o, "No matches") {
		t.Errorf("the Korean search finds nothing:\n%s", o)
	}
}

func indexOf(lines []string, sub string) int {
	for i, l := range lines {
		if strings.Contains(l, sub) {
			return i
		}
	}
	return -1
}

// TestReadmeDemo runs the README's first command as written, with the temp
// folder the demo's vault goes to inside the test's own.
func TestReadmeDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo through go run")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command(goCmd, "run", "./cmd/nexus", "demo")
	cmd.Dir = repo
	// As a new user has it: Go, and no nexus installed on PATH.
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir(), "NEXUS_VAULT=", "NEXUS_AGENT=", "PATH="+filepath.Dir(goCmd))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run ./cmd/nexus demo: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "checks pass") || !strings.Contains(string(out), "obsidian://open?path=") {
		t.Errorf("demo output:\n%s", out)
	}
	// The commands it closes with run as written, and it says how to
	// install nexus (issue 31).
	for _, want := range []string{"  go run ./cmd/nexus --vault ", "go install ./cmd/nexus", "on your PATH"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output without nexus on PATH lacks %q:\n%s", want, out)
		}
	}
}
