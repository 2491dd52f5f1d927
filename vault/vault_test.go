package vault

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/internal/editsim"
)

func mustInit(tb testing.TB) *Vault {
	tb.Helper()
	v, _, err := Init(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func TestPathRefusesEscapes(t *testing.T) {
	v := mustInit(t)
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(v.Root(), "projects"), 0o755); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		if err := os.Symlink(outside, filepath.Join(v.Root(), "projects", "out")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(v.Root(), "agents"), filepath.Join(v.Root(), "projects", "in")); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, rel string
		ok        bool
	}{
		{"plain", "projects/a.md", true},
		{"nested new", "projects/new/deep/a.md", true},
		{"dot segments", "projects/./a.md", true},
		{"korean", "projects/배포.md", true},
		{"empty", "", false},
		{"dotdot", "../x.md", false},
		{"dotdot inside", "projects/../../x.md", false},
		{"dotdot backslash", `projects\..\..\x.md`, false},
		{"absolute", "/etc/passwd", false},
		{"windows drive", `C:\Windows\x.md`, false},
		{"root itself", ".", false},
		{"nul", "a\x00.md", false},
		{"invalid utf8", "a\xff.md", false},
	}
	if runtime.GOOS != "windows" {
		tests = append(tests,
			struct {
				name, rel string
				ok        bool
			}{"symlink out", "projects/out/secret.md", false},
			struct {
				name, rel string
				ok        bool
			}{"symlink in", "projects/in/x.md", true})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := v.Path(tt.rel)
			if tt.ok {
				if err != nil {
					t.Fatalf("Path(%q) = %v, want ok", tt.rel, err)
				}
				if !strings.HasPrefix(p, v.Root()) {
					t.Fatalf("Path(%q) = %q, not under %q", tt.rel, p, v.Root())
				}
				return
			}
			if !errors.Is(err, ErrUnsafePath) {
				t.Fatalf("Path(%q) = %q, %v; want ErrUnsafePath", tt.rel, p, err)
			}
		})
	}
}

func TestCleanRelNormalisesNFC(t *testing.T) {
	// "é" decomposed (e + U+0301) must compare equal to the composed form.
	got, err := CleanRel("projects/cafe\u0301.md")
	if err != nil {
		t.Fatal(err)
	}
	if got != "projects/caf\u00e9.md" {
		t.Fatalf("CleanRel = %q, want NFC form", got)
	}
}

func TestHidden(t *testing.T) {
	for rel, want := range map[string]bool{
		".obsidian/app.json": true, ".nexus/keys/a.key": true, "notes/.trash/x.md": true,
		"notes/.x.md.tmp-1": true, "notes/a.md": false, "agents/lyra/MEMORY.md": false,
	} {
		if got := Hidden(rel); got != want {
			t.Errorf("Hidden(%q) = %v, want %v", rel, got, want)
		}
	}
}

// TestInitKeepsExistingVault runs init on an Obsidian vault: no existing
// byte or mtime changes, and a second run creates nothing.
func TestInitKeepsExistingVault(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"Welcome.md":               "# Welcome\n\nmy note\r\n",
		".obsidian/app.json":       `{"legacyEditor":false}`,
		".obsidian/workspace.json": "{}",
		"attachments/pic.png":      "\x89PNG\r\n\x1a\n\x00\x00",
		"projects/existing.md":     "---\ntags: [a]\n---\nbody",
		"agents/README.md":         "people wrote this",
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	_, created, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(created) != "[.nexus/]" {
		t.Fatalf("first init created %v, want [.nexus/] alone", created)
	}
	// Only .nexus/ is new: no visible folder (log/, review/, ...) appears
	// in Obsidian's file explorer.
	entries, _ := os.ReadDir(dir)
	var top []string
	for _, e := range entries {
		top = append(top, e.Name())
	}
	if fmt.Sprint(top) != "[.nexus .obsidian Welcome.md agents attachments projects]" {
		t.Errorf("vault holds %v after init", top)
	}
	for _, d := range []string{".nexus/config.yaml", ".nexus/keys", ".nexus/index", ".nexus/state/locks"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(d))); err != nil {
			t.Errorf("init did not make %s: %v", d, err)
		}
	}
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		got, err := os.ReadFile(p)
		if err != nil || string(got) != body {
			t.Errorf("%s changed: %q %v", rel, got, err)
		}
		st, _ := os.Stat(p)
		if !st.ModTime().Equal(old) {
			t.Errorf("%s mtime changed to %v", rel, st.ModTime())
		}
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, ".nexus", "config.yaml"))
	_, created2, err := Init(dir)
	if err != nil || len(created2) != 0 {
		t.Fatalf("second init: created %v, err %v", created2, err)
	}
	cfg2, _ := os.ReadFile(filepath.Join(dir, ".nexus", "config.yaml"))
	if string(cfg) != string(cfg2) {
		t.Fatal("second init rewrote config.yaml")
	}
}

func TestFind(t *testing.T) {
	v := mustInit(t)
	deep := filepath.Join(v.Root(), "projects", "a", "b")
	os.MkdirAll(deep, 0o755)
	t.Chdir(deep)
	t.Setenv("NEXUS_VAULT", "")
	got, err := Find("")
	if err != nil || got != v.Root() {
		t.Fatalf("Find from %s = %q, %v; want %q", deep, got, err, v.Root())
	}
	t.Setenv("NEXUS_VAULT", "/env/vault")
	if got, _ := Find(""); got != "/env/vault" {
		t.Fatalf("Find with $NEXUS_VAULT = %q", got)
	}
	if got, _ := Find("/flag"); got != "/flag" {
		t.Fatalf("Find with flag = %q", got)
	}
	t.Setenv("NEXUS_VAULT", "")
	t.Chdir(t.TempDir())
	if _, err := Find(""); !errors.Is(err, ErrNotVault) {
		t.Fatalf("Find outside a vault: %v", err)
	}
	if _, err := Open(t.TempDir()); !errors.Is(err, ErrNotVault) {
		t.Fatalf("Open non-vault: %v", err)
	}
}

func TestConfigDefaultsAndUpdateKeepsComments(t *testing.T) {
	v := mustInit(t)
	if c := v.Config(); c.MemoryCharLimit != 2200 || c.UserCharLimit != 1375 || c.MemoryIndexLineLimit != 200 {
		t.Fatalf("defaults: %+v", c)
	}
	err := v.UpdateConfig(func(c *Config) error {
		if c.Agents == nil {
			c.Agents = map[string]AgentConfig{}
		}
		c.Agents["lyra"] = AgentConfig{TokenSHA256: "abc"}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(v.MustPath(ConfigFile))
	for _, want := range []string{"# Bounded memory limits", "memory_char_limit: 2200", "token_sha256: abc"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("config lost %q:\n%s", want, data)
		}
	}
	v2, err := Open(v.Root())
	if err != nil {
		t.Fatal(err)
	}
	if v2.Config().Agents["lyra"].TokenSHA256 != "abc" {
		t.Fatalf("reopened config: %+v", v2.Config())
	}
}

func TestConfigCustomLimitsAndBadYAML(t *testing.T) {
	v := mustInit(t)
	os.WriteFile(v.MustPath(ConfigFile), []byte("memory_char_limit: 100\nuser_char_limit: 0\n"), 0o644)
	v2, err := Open(v.Root())
	if err != nil {
		t.Fatal(err)
	}
	if c := v2.Config(); c.MemoryCharLimit != 100 || c.UserCharLimit != 1375 {
		t.Fatalf("got %+v", c)
	}
	os.WriteFile(v.MustPath(ConfigFile), []byte("memory_char_limit: [\n"), 0o644)
	if _, err := Open(v.Root()); err == nil || !strings.Contains(err.Error(), "config.yaml") {
		t.Fatalf("bad YAML: %v", err)
	}
}

func TestCheckText(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"hello", true}, {"배포 완료", true}, {"", false}, {"  \n\t", false},
		{"bad \xff utf8", false}, {"nul\x00", false}, {strings.Repeat("x", 101), false},
	}
	for _, tt := range tests {
		err := CheckText("content", tt.in, 100)
		if (err == nil) != tt.ok {
			t.Errorf("CheckText(%q) = %v", tt.in, err)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckText(%q) error %v does not wrap ErrInvalid", tt.in, err)
		}
	}
}

// TestPathFindsDecomposedNames: a note saved with an NFD name (macOS, sync
// tools) is opened by its NFC path.
func TestPathFindsDecomposedNames(t *testing.T) {
	v := mustInit(t)
	nfdDir := "\u1112\u116c\u110b\u1174"     // 회의, decomposed
	nfdFile := "\u1109\u1165\u1107\u1165.md" // 서버.md, decomposed
	os.MkdirAll(filepath.Join(v.Root(), "projects", nfdDir), 0o755)
	want := filepath.Join(v.Root(), "projects", nfdDir, nfdFile)
	os.WriteFile(want, []byte("x"), 0o644)
	got, err := v.Path("projects/회의/서버.md")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(got); err != nil {
		t.Fatalf("Path gave %q, which does not open: %v", got, err)
	}
	if rel, _ := v.Rel(want); rel != "projects/회의/서버.md" {
		t.Fatalf("Rel of the NFD file = %q, want NFC", rel)
	}
	// A new file in an NFD folder goes into that folder.
	p, _ := v.Path("projects/회의/new.md")
	if filepath.Dir(p) != filepath.Dir(want) {
		t.Fatalf("new file path %q not in the existing folder", p)
	}
}

// TestConfigConcurrentUpdate: Config may be read while UpdateConfig runs
// (the MCP server reads limits on every call); -race checks it.
func TestConfigConcurrentUpdate(t *testing.T) {
	v := mustInit(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 20; i++ {
			v.UpdateConfig(func(c *Config) error { c.MemoryCharLimit = 3000 + i; return nil })
		}
	}()
	// Readers meanwhile see each update whole and in order: the default,
	// then 3000, 3001, ... never going back.
	last := v.Config().MemoryCharLimit
	for {
		select {
		case <-done:
			if got := v.Config().MemoryCharLimit; got != 3019 {
				t.Fatalf("limit = %d after updates, want 3019", got)
			}
			return
		default:
			got := v.Config().MemoryCharLimit
			if got < last || (got != DefaultConfig().MemoryCharLimit && (got < 3000 || got > 3019)) {
				t.Fatalf("a reader saw the limit go from %d to %d", last, got)
			}
			last = got
		}
	}
}

func TestKeepLayout(t *testing.T) {
	for _, tt := range []struct{ old, new, want string }{
		{"a: 1\n\nb: 2\n", "a: 1\nb: 2\n", "a: 1\n\nb: 2\n"},
		{"a: 1\n\nb: 2\n", "a: 1\nb: 3\n", "a: 1\n\nb: 3\n"},
		{"# c\na: 1\n\n\nb: 2\n", "# c\na: 1\nb: 2\nc:\n  d: 4\n", "# c\na: 1\n\n\nb: 2\nc:\n  d: 4\n"},
		{"a: 1\nb: 2\n", "a: 1\nb: 2\n", "a: 1\nb: 2\n"},
		{"", "a: 1\n\nb: 2\n", "a: 1\n\nb: 2\n"},                                   // no file yet: the encoder's text
		{"a: 1   # why\n\nb: 2\n", "a: 1 # why\nb: 2\n", "a: 1   # why\n\nb: 2\n"}, // the person's spacing
		{"a: 1   # why\n", "a: 5 # why\n", "a: 5 # why\n"},                         // a changed line is new's
		{"# head\n\na: 1\n", "# head\n\na: 1\n", "# head\n\na: 1\n"},               // the encoder's own blank line is not doubled
		{"a: 1\n\n", "a: 1\nb: 2\n", "a: 1\nb: 2\n\n"},
		// A blank line inside a plain multi-line value is a newline of the
		// value: putting it back would change the value.
		{"note: first\n  second\n\n  third\nb: 2\n", "note: |-\n  first second\n  third\nb: 3\n", "note: |-\n  first second\n  third\nb: 3\n"},
		{"a: 1\r\n\r\nb: 2\r\n", "a: 1\nb: 2\n", "a: 1\nb: 2\n"}, // CRLF: the encoder's text
	} {
		if got := string(keepLayout([]byte(tt.old), []byte(tt.new))); got != tt.want {
			t.Errorf("keepLayout(%q, %q) = %q, want %q", tt.old, tt.new, got, tt.want)
		}
	}
}

// TestUpdateConfigKeepsBlankLines: a token added with 'nexus agent token'
// leaves the rest of a person's config.yaml as it was, blank lines and
// comments included.
func TestUpdateConfigKeepsBlankLines(t *testing.T) {
	v := mustInit(t)
	before, err := os.ReadFile(v.MustPath(ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.UpdateConfig(func(c *Config) error {
		c.Agents = map[string]AgentConfig{"lyra": {TokenSHA256: "abc"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(v.MustPath(ConfigFile))
	want := strings.Replace(string(before), "agents: {}\n", "agents:\n  lyra:\n    token_sha256: abc\n", 1)
	if string(after) != want {
		t.Fatalf("config after adding a token:\n%s\nwant:\n%s", after, want)
	}
}

// TestUpdateConfigDuringInPlaceSave: a person saves config.yaml in place
// (truncate, then write through the same handle) while Nexus adds a
// token. The update waits for the save and keeps it.
func TestUpdateConfigDuringInPlaceSave(t *testing.T) {
	v := mustInit(t)
	p := v.MustPath(ConfigFile)
	before, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(before), "memory_char_limit: 2200", "memory_char_limit: 3000", 1)
	done, err := editsim.SaveInPlace(p, edited, 150*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.UpdateConfig(func(c *Config) error {
		c.Agents = map[string]AgentConfig{"lyra": {TokenSHA256: "abc"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(p)
	if !strings.Contains(string(after), "memory_char_limit: 3000") || !strings.Contains(string(after), "token_sha256: abc") {
		t.Fatalf("config after the save and the update:\n%s", after)
	}
}

// TestWritersMakeMissingFolders: init makes only .nexus/, so the first
// write into agents/, log/ or review/ must make the folder itself.
func TestWritersMakeMissingFolders(t *testing.T) {
	v := mustInit(t)
	a := v.MustPath("review/pending/r-1.md")
	if err := ReplaceIf(a, nil, []byte("a"), 0o644); err != nil {
		t.Fatalf("ReplaceIf into a missing folder: %v", err)
	}
	b := v.MustPath("agents/lyra/facts/x.md")
	if err := WriteFile(b, []byte("b"), 0o644); err != nil {
		t.Fatalf("WriteFile into a missing folder: %v", err)
	}
	for p, want := range map[string]string{a: "a", b: "b"} {
		if got, err := os.ReadFile(p); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v", p, got, err)
		}
	}
	// A file where the folder should be is an error, and nothing is made.
	if err := os.WriteFile(v.MustPath("log"), []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(v.MustPath("log/live/x.md"), []byte("c"), 0o644); err == nil {
		t.Fatal("WriteFile under a file succeeded")
	}
}

// TestDefaultConfigCitesDocsThatExist: the comments of a new config.yaml
// point a person at documents this repository has (not at a "SPEC §2" it
// does not ship).
func TestDefaultConfigCitesDocsThatExist(t *testing.T) {
	if strings.Contains(defaultConfigYAML, "SPEC") || strings.Contains(defaultConfigYAML, "§") {
		t.Errorf("config.yaml cites the spec, which is not in the repository:\n%s", defaultConfigYAML)
	}
	cites := regexp.MustCompile(`docs/[a-z0-9-]+\.md`).FindAllString(defaultConfigYAML, -1)
	if len(cites) == 0 {
		t.Fatal("config.yaml points at no document for its limits")
	}
	for _, c := range cites {
		if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(c))); err != nil {
			t.Errorf("config.yaml cites %s: %v", c, err)
		}
	}
}
