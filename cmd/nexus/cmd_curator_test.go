package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestCuratorCommands(t *testing.T) {
	dir := factVault(t)
	nx := func(args ...string) (int, string, string) {
		return factCLI(t, "", append([]string{"--vault", dir}, args...)...)
	}
	as := func(args ...string) (int, string, string) { return nx(append([]string{"--agent", "lyra"}, args...)...) }
	if code, _, errs := as("fact", "write", "--name", "Staging SSH", "--type", "project", "--description", "port 2222", "Staging listens on 2222."); code != 0 {
		t.Fatal(errs)
	}
	// Pin: only the pinned line is added; twice is a no-op.
	p := filepath.Join(dir, "agents", "lyra", "memory", "staging-ssh.md")
	before, _ := os.ReadFile(p)
	code, out, _ := as("--json", "fact", "pin", "staging-ssh")
	var pin struct {
		Pinned, Changed bool
		Slug            string
	}
	if code != 0 || json.Unmarshal([]byte(out), &pin) != nil || !pin.Pinned || !pin.Changed {
		t.Fatalf("pin: %d %q", code, out)
	}
	after, _ := os.ReadFile(p)
	if string(after) != strings.Replace(string(before), "\n---\n", "\npinned: true\n---\n", 1) {
		t.Errorf("pin changed more than its line:\n%s", after)
	}
	if code, out, _ := as("fact", "pin", "staging-ssh"); code != 0 || !strings.Contains(out, "already pinned") {
		t.Errorf("pin twice: %d %q", code, out)
	}
	if code, _, errs := as("fact", "pin", "no-such-fact"); code != 1 || !strings.Contains(errs, "no-such-fact") {
		t.Errorf("pin unknown: %d %q", code, errs)
	}
	if code, _, _ := as("fact", "pin"); code != 2 {
		t.Errorf("pin without a slug: exit %d, want 2", code)
	}
	// A read is a recall signal; stats shows it.
	as("fact", "read", "staging-ssh")
	code, out, _ = as("--json", "fact", "stats", "staging-ssh")
	var st struct {
		State string
		Use   struct{ Reads int }
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.State != "pinned" || st.Use.Reads != 1 {
		t.Fatalf("stats: %d %q", code, out)
	}
	if code, out, _ := as("fact", "stats"); code != 0 || !strings.Contains(out, "staging-ssh") || !strings.Contains(out, "pinned") {
		t.Errorf("stats table: %d %q", code, out)
	}
	if code, out, _ := as("fact", "unpin", "staging-ssh"); code != 0 || !strings.Contains(out, "not pinned") {
		t.Errorf("unpin: %d %q", code, out)
	}
	if got, _ := os.ReadFile(p); string(got) != string(before) {
		t.Errorf("unpin left the file different")
	}

	// A nearly full MEMORY.md: status says so, a dry run writes nothing,
	// a run files a spill proposal that review lists with its kind.
	for i := range 8 {
		entry := "Note " + string(rune('A'+i)) + " about staging: " + strings.Repeat("deploys roll out in waves, ", 9)
		if code, _, errs := as("memory", "add", entry); code != 0 {
			t.Fatalf("memory add: %s", errs)
		}
	}
	code, out, _ = nx("--json", "curator", "status")
	var status struct {
		Agents []struct {
			Agent  string
			Memory struct{ Over bool }
		}
		WouldDo []struct{ Kind string } `json:"would_do"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &status) != nil || len(status.Agents) != 1 || !status.Agents[0].Memory.Over || len(status.WouldDo) != 1 || status.WouldDo[0].Kind != "spill" {
		t.Fatalf("status: %d %q", code, out)
	}
	if code, out, _ := nx("curator", "run", "--dry-run"); code != 0 || !strings.Contains(out, "Dry run") || !strings.Contains(out, "+ → fact [[") {
		t.Errorf("dry run: %d %q", code, out)
	}
	if des, _ := os.ReadDir(filepath.Join(dir, "review", "pending")); len(des) != 0 {
		t.Fatalf("dry run filed %d items", len(des))
	}
	code, out, _ = nx("--json", "curator", "run")
	var pass struct {
		Diary     string
		Snapshot  string
		Proposals []struct{ ID, Kind string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &pass) != nil || len(pass.Proposals) != 1 || pass.Snapshot == "" {
		t.Fatalf("run: %d %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(pass.Diary))); err != nil {
		t.Errorf("no diary: %v", err)
	}
	if code, out, _ := nx("review"); code != 0 || !strings.Contains(out, pass.Proposals[0].ID) || !strings.Contains(out, "spill") {
		t.Errorf("review list: %d %q", code, out)
	}
	if code, out, _ := nx("review", "show", pass.Proposals[0].ID); code != 0 || !strings.Contains(out, "## Evidence") || !strings.Contains(out, "```diff") {
		t.Errorf("review show: %d %q", code, out)
	}
	// The agent hears of it in its next session start and memory results.
	if code, out, _ := as("prompt"); code != 0 || !strings.Contains(out, "Curator: MEMORY.md is at") || !strings.Contains(out, pass.Proposals[0].ID) {
		t.Errorf("prompt lacks the curator line: %q", out)
	}
	if code, out, _ := as("memory", "show"); code != 0 || !strings.Contains(out, pass.Proposals[0].ID) {
		t.Errorf("memory show lacks the curator line: %q", out)
	}
	if code, out, _ := nx("review", "approve", pass.Proposals[0].ID); code != 0 {
		t.Fatalf("approve: %d %q", code, out)
	}
	if code, out, _ := as("--json", "memory", "show"); code != 0 || strings.Contains(out, "curator_notice") {
		t.Errorf("after approval: %d %q", code, out)
	}
	if code, out, _ := nx("journey", "--agent", "lyra"); code != 0 || !strings.Contains(out, "curator pass") || !strings.Contains(out, "spill") {
		t.Errorf("journey: %d %q", code, out)
	}
}

// docBlock returns the lines of the first fenced code block after the
// line starting with heading in docs/curation.md.
func docBlock(t *testing.T, heading string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "curation.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i := strings.Index(s, "\n"+heading)
	if i < 0 {
		t.Fatalf("docs/curation.md has no heading %q", heading)
	}
	s = s[i+1:]
	start := strings.Index(s, "\n```")
	if start < 0 {
		t.Fatalf("docs/curation.md: no code block after %q", heading)
	}
	s = s[start+4:]
	s = s[strings.Index(s, "\n")+1:]
	end := strings.Index(s, "\n```")
	if end < 0 {
		t.Fatalf("docs/curation.md: the block after %q is not closed", heading)
	}
	return strings.Split(s[:end], "\n")
}

// shellWords splits a command line the way sh does for the simple lines
// the docs hold: words separated by spaces, "double quotes" grouping.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inQuote, inWord := false, false
	for _, r := range line {
		switch {
		case r == '"':
			inQuote, inWord = !inQuote, true
		case r == ' ' && !inQuote:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
			}
			inWord = false
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inQuote {
		t.Fatalf("unbalanced quotes in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// TestCurationDocTour runs the "A first look" block of docs/curation.md,
// taken from the file itself, on a fresh vault: every line must succeed.
// The configuration block, with every value changed, must be what
// 'curator status' reports in force (so each documented key is real).
func TestCurationDocTour(t *testing.T) {
	dir := factVault(t)
	lines := docBlock(t, "## A first look")
	if len(lines) < 5 {
		t.Fatalf("the tour has %d lines", len(lines))
	}
	for _, line := range lines {
		words := shellWords(t, line)
		if len(words) < 2 || words[0] != "nexus" {
			t.Fatalf("tour line %q is not a nexus command", line)
		}
		if code, out, errs := factCLI(t, "", append([]string{"--vault", dir}, words[1:]...)...); code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", line, code, out, errs)
		}
	}

	// Two proposals (MEMORY.md and USER.md nearly full), decided with the
	// block of "Deciding", its ids replaced by theirs in order.
	nx := func(args ...string) (int, string, string) {
		return factCLI(t, "", append([]string{"--vault", dir, "--agent", "lyra"}, args...)...)
	}
	long := strings.Repeat("deploys roll out in waves, ", 9)
	for i := range 8 {
		if code, _, errs := nx("memory", "add", "Note "+strconv.Itoa(i)+" about staging: "+long); code != 0 {
			t.Fatal(errs)
		}
	}
	for i := range 5 {
		if code, _, errs := nx("memory", "add", "--target", "user", "사용자 메모 "+strconv.Itoa(i)+": "+long); code != 0 {
			t.Fatal(errs)
		}
	}
	code, out, errs := factCLI(t, "", "--vault", dir, "--json", "curator", "run")
	var pass struct{ Proposals []struct{ ID string } }
	if code != 0 || json.Unmarshal([]byte(out), &pass) != nil || len(pass.Proposals) != 2 {
		t.Fatalf("curator run: %d %s %s", code, out, errs)
	}
	decide := docBlock(t, "### Deciding")
	docIDs := regexp.MustCompile(`r-[0-9a-f]{6}`)
	seen := map[string]string{}
	for _, line := range decide {
		line = docIDs.ReplaceAllStringFunc(line, func(id string) string {
			if seen[id] == "" {
				seen[id] = pass.Proposals[len(seen)].ID
			}
			return seen[id]
		})
		words := shellWords(t, line)
		if code, out, errs := factCLI(t, "", append([]string{"--vault", dir}, words[1:]...)...); code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", line, code, out, errs)
		}
	}
	if len(seen) != 2 {
		t.Fatalf("the Deciding block names %d proposals, want 2", len(seen))
	}
	for _, p := range pass.Proposals {
		if _, err := os.Stat(filepath.Join(dir, "review", "pending", p.ID+".md")); !os.IsNotExist(err) {
			t.Errorf("%s is still pending after the Deciding block", p.ID)
		}
	}

	block := strings.Join(docBlock(t, "## Configuration"), "\n")
	num := regexp.MustCompile(`(?m)^  ([a-z_]+): (\d+)`)
	want := map[string]int{}
	changed := num.ReplaceAllStringFunc(block, func(m string) string {
		sm := num.FindStringSubmatch(m)
		n, _ := strconv.Atoi(sm[2])
		n += 7
		if sm[1] == "pressure_percent" {
			n = 90
		}
		want[sm[1]] = n
		return "  " + sm[1] + ": " + strconv.Itoa(n)
	})
	if len(want) != 8 || !strings.Contains(block, "  off: false") || !strings.Contains(block, "  recall: true") {
		t.Fatalf("the configuration block changed shape (%d numeric keys):\n%s", len(want), block)
	}
	cfg := filepath.Join(dir, ".nexus", "config.yaml")
	old, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(old, []byte("\n"+changed+"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = factCLI(t, "", "--vault", dir, "--json", "curator", "status")
	var st struct{ Config map[string]int }
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("status: %d %s %s", code, out, errs)
	}
	for k, n := range want {
		if st.Config[k] != n {
			t.Errorf("config %s: status says %d, the documented key set %d", k, st.Config[k], n)
		}
	}
}

func TestCuratorStatusWithoutAgents(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := factCLI(t, "", "init", dir); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs := factCLI(t, "", "--vault", dir, "curator", "status")
	if code != 0 || !strings.Contains(out, "No agents yet") || strings.Contains(out, "AGENT  MEMORY") {
		t.Fatalf("curator status, no agents: %d %q %q", code, out, errs)
	}
}
