package links

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// vault writes files under a temp folder.
func vault(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// conventions is an Obsidian vault with each kind of link (SPEC §9).
var conventions = map[string]string{
	"People/Ada Lovelace.md":  "# Ada\nWrote the first program.\n",
	"Archive/Ada Lovelace.md": "# An older Ada note\n",
	"Notes/Ada Lovelace.md":   "# Ada, notes folder copy\n",
	"Notes/Engine.md": "---\nauthor: \"[[Ada Lovelace]]\"\nrelated:\n  - \"[[Babbage|Charles]]\"\n---\n" +
		"# Engine\n" +
		"See [[ada lovelace#Life|her life]] and [[Babbage]].\n" +
		"![[diagram.png|300]] and ![[Paper.pdf#page=3]]\n" +
		"Block: [[People/Ada Lovelace#^quote-1]]\n" +
		"Markdown: [the man](../Babbage%20Charles.md) and [web](https://example.com)\n" +
		"```\n[[Not A Link]]\n```\n" +
		"Inline `[[Code Link]]` and %%[[Hidden]]%% skipped; [[Nowhere]] is unresolved.\n",
	"Babbage.md":             "# Charles\n",
	"Babbage Charles.md":     "# Charles Babbage\nsee [[Engine]]\n",
	"diagram.png":            "png",
	"Files/Paper.pdf":        "pdf",
	"Boards/Plan.canvas":     "{\n\"nodes\":[\n{\"id\":\"a\",\"type\":\"file\",\"file\":\"People/Ada Lovelace.md\"},\n{\"id\":\"b\",\"type\":\"text\",\"text\":\"ask [[Babbage]]\"}\n]}\n",
	"Daily/2023-09-12.md":    "Met with [[ADA LOVELACE]] today.\n| who | note |\n|---|---|\n| [[People/Ada Lovelace\\|Ada]] | x |\n",
	"Daily/Café.md":          "[[cafe\u0301 menu]]\n",
	"Daily/café menu.md":     "menu\n",
	".obsidian/workspace.md": "[[Ada Lovelace]]\n",
}

func TestOutgoing(t *testing.T) {
	root := vault(t, conventions)
	res, err := Find(root, "Notes/Engine.md")
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		line                int
		target, sub, path   string
		embed, md           bool
		prop, shown, inText string
	}
	wants := []want{
		{2, "Ada Lovelace", "", "Notes/Ada Lovelace.md", false, false, "author", "", `author: "[[Ada Lovelace]]"`},
		{4, "Babbage", "", "Babbage.md", false, false, "related", "Charles", `"[[Babbage|Charles]]"`},
		{7, "ada lovelace", "Life", "Notes/Ada Lovelace.md", false, false, "", "her life", "See [[ada lovelace#Life|her life]]"},
		{7, "Babbage", "", "Babbage.md", false, false, "", "", "and [[Babbage]]."},
		{8, "diagram.png", "", "diagram.png", true, false, "", "300", "![[diagram.png|300]]"},
		{8, "Paper.pdf", "page=3", "Files/Paper.pdf", true, false, "", "", "![[Paper.pdf#page=3]]"},
		{9, "People/Ada Lovelace", "^quote-1", "People/Ada Lovelace.md", false, false, "", "", "Block:"},
		{10, "../Babbage Charles.md", "", "Babbage Charles.md", false, true, "", "the man", "Markdown:"},
		{14, "Nowhere", "", "", false, false, "", "", "is unresolved"},
	}
	if len(res.Outgoing) != len(wants) {
		t.Fatalf("got %d links, want %d:\n%+v", len(res.Outgoing), len(wants), res.Outgoing)
	}
	for i, w := range wants {
		g := res.Outgoing[i]
		if g.Line != w.line || g.Target != w.target || g.Sub != w.sub || g.Path != w.path || g.Embed != w.embed ||
			g.Markdown != w.md || g.Property != w.prop || g.Shown != w.shown || !strings.Contains(g.Text, w.inText) {
			t.Errorf("link %d = %+v\nwant %+v", i, g, w)
		}
	}
}

func TestBacklinks(t *testing.T) {
	root := vault(t, conventions)
	cases := []struct {
		note string
		path string
		want []string // "from:line"
	}{
		// A bare name resolves to the file of that name in the linking
		// note's folder, else to the shortest path: Notes/ (21
		// characters) before People/ (22) and Archive/ (23). Explicit
		// paths, a block link and the canvas file node count.
		{"People/Ada Lovelace", "People/Ada Lovelace.md", []string{"Boards/Plan.canvas:3", "Daily/2023-09-12.md:4", "Notes/Engine.md:9"}},
		{"notes/ada lovelace.md", "Notes/Ada Lovelace.md", []string{"Daily/2023-09-12.md:1", "Notes/Engine.md:2", "Notes/Engine.md:7"}},
		{"Archive/Ada Lovelace.md", "Archive/Ada Lovelace.md", nil},
		// A name is resolved as a link from the top: Babbage.md; the
		// frontmatter, the body and a canvas text node link to it.
		{"babbage", "Babbage.md", []string{"Boards/Plan.canvas:4", "Notes/Engine.md:4", "Notes/Engine.md:7"}},
		{"Babbage Charles", "Babbage Charles.md", []string{"Notes/Engine.md:10"}},
		{"Engine", "Notes/Engine.md", []string{"Babbage Charles.md:2"}},
		{"diagram.png", "diagram.png", []string{"Notes/Engine.md:8"}},
		{"Paper.pdf", "Files/Paper.pdf", []string{"Notes/Engine.md:8"}},
		// NFD in the link, NFC on disk.
		{"Daily/café menu.md", "Daily/café menu.md", []string{"Daily/Café.md:1"}},
	}
	for _, c := range cases {
		res, err := Find(root, c.note)
		if err != nil {
			t.Fatalf("%s: %v", c.note, err)
		}
		if res.Note != c.path {
			t.Errorf("%s: note %q, want %q", c.note, res.Note, c.path)
		}
		var got []string
		for _, l := range res.Backlinks {
			got = append(got, l.From+":"+itoa(l.Line))
			if l.Path != c.path {
				t.Errorf("%s: backlink %+v has path %q", c.note, l, l.Path)
			}
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: backlinks %v, want %v", c.note, got, c.want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestFindMissing(t *testing.T) {
	root := vault(t, map[string]string{"a.md": "x"})
	if _, err := Find(root, "nope"); !errors.Is(err, ErrNoNote) {
		t.Fatalf("err = %v, want ErrNoNote", err)
	}
	// Hidden files are not in the vault.
	root = vault(t, map[string]string{".trash/old.md": "x"})
	if _, err := Find(root, ".trash/old.md"); !errors.Is(err, ErrNoNote) {
		t.Fatalf("hidden: err = %v, want ErrNoNote", err)
	}
}

func TestExtractCode(t *testing.T) {
	src := "~~~md\n[[a]]\n~~~\n%% multi\n[[b]]\nline %% [[c]]\n    ```\n[[d]]\n````\n[[e]]\n````\n"
	var got []string
	for _, l := range Extract("n.md", []byte(src)) {
		got = append(got, l.Target+":"+itoa(l.Line))
	}
	if strings.Join(got, " ") != "c:6 d:8" {
		t.Errorf("got %v, want [c:6 d:8] (an indented fence is not a fence)", got)
	}
}

func FuzzExtract(f *testing.F) {
	f.Add("n.md", []byte(conventions["Notes/Engine.md"]))
	f.Add("b.canvas", []byte(conventions["Boards/Plan.canvas"]))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		lines := strings.Count(string(data), "\n") + 1
		for _, l := range Extract(name, data) {
			if l.Line < 1 || l.Line > lines || l.Target == "" {
				t.Fatalf("bad link %+v in %d lines", l, lines)
			}
		}
	})
}

// TestSymlinkNotRead: a symlink could point outside the vault; its text
// is never a backlink (the index skips symlinks too).
func TestSymlinkNotRead(t *testing.T) {
	root := vault(t, map[string]string{"a.md": "x"})
	outside := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(outside, []byte("secret [[a]]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link.md")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	res, err := Find(root, "a")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Backlinks) != 0 {
		t.Errorf("backlinks %+v, want none", res.Backlinks)
	}
}
