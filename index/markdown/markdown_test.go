package markdown

import (
	"reflect"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParse(t *testing.T) {
	note := "---\ntitle: Staging notes\naliases: [stage, 스테이징]\ntags: infra, ops\n---\n" +
		"Intro with #inline/nested tag and [[Other Note#Part|shown]] and [md](My%20Note.md).\n" +
		"\n# First H1\n\nBody `#notatag [[notalink]]` text %%hidden #nottag%%.\n\n" +
		"```\n#codetag [[codelink]]\nssh -p 2222\n```\n\n## 배포 절차\n\n배포를 시작한다 #배포\n"
	n := Parse("projects/x.md", []byte(note))
	if n.Title != "Staging notes" {
		t.Errorf("title %q", n.Title)
	}
	if !reflect.DeepEqual(n.Aliases, []string{"stage", "스테이징"}) {
		t.Errorf("aliases %q", n.Aliases)
	}
	if want := []string{"infra", "ops", "inline/nested", "배포"}; !reflect.DeepEqual(n.Tags, want) {
		t.Errorf("tags %q, want %q", n.Tags, want)
	}
	if want := []string{"My Note", "Other Note"}; !reflect.DeepEqual(sorted(n.Links), want) {
		t.Errorf("links %q, want %q", n.Links, want)
	}
	if n.BodyLine != 6 {
		t.Errorf("body line %d", n.BodyLine)
	}
	if len(n.Sections) != 3 {
		t.Fatalf("sections %+v", n.Sections)
	}
	s0, s1, s2 := n.Sections[0], n.Sections[1], n.Sections[2]
	if s0.Line != 6 || s0.Level != 0 || !strings.Contains(s0.Text, "shown") || strings.Contains(s0.Text, "[[") {
		t.Errorf("preamble %+v", s0)
	}
	if s1.Heading != "First H1" || s1.Line != 8 || s1.EndLine != 16 || !strings.Contains(s1.Text, "ssh -p 2222") || strings.Contains(s1.Text, "hidden") {
		t.Errorf("h1 %+v", s1)
	}
	if s2.Heading != "배포 절차" || s2.Line != 17 || !reflect.DeepEqual(s2.Path, []string{"First H1", "배포 절차"}) {
		t.Errorf("h2 %+v", s2)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func TestTitleFallbacks(t *testing.T) {
	tests := []struct{ name, path, src, want string }{
		{"h1", "a/b.md", "text\n# Heading One\n", "Heading One"},
		{"file name", "a/Some Note.md", "no heading", "Some Note"},
		{"korean file", "메모.md", "", "메모"},
		{"h2 only", "x.md", "## Two\n", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Parse(tt.path, []byte(tt.src)).Title; got != tt.want {
				t.Errorf("got %q want %q", got, tt.want)
			}
		})
	}
}

func TestMalformed(t *testing.T) {
	tests := []struct {
		name, src string
		warn      bool
		contains  string
	}{
		{"bad yaml", "---\ntitle: [unclosed\n---\nbody words\n", true, "unclosed"},
		{"no closing fence", "---\ntitle: x\nbody\n", false, "title"},
		{"invalid utf8", "hello \xff\xfe world", true, "world"},
		{"nul bytes", "a\x00b\x00c", false, "a"},
		{"tags scalar number", "---\ntags: 123\n---\nx", false, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := Parse("n.md", []byte(tt.src))
			if (len(n.Warnings) > 0) != tt.warn {
				t.Errorf("warnings %q", n.Warnings)
			}
			var all strings.Builder
			for _, s := range n.Sections {
				all.WriteString(s.Heading + " " + s.Text)
			}
			if !strings.Contains(all.String(), tt.contains) {
				t.Errorf("text %q lacks %q", all.String(), tt.contains)
			}
		})
	}
}

func TestTagRules(t *testing.T) {
	n := Parse("t.md", []byte("#123 #a1 #Caps #x/y/z #한글태그 word#notag `#code`\n"))
	want := []string{"a1", "caps", "x/y/z", "한글태그"}
	if !reflect.DeepEqual(n.Tags, want) {
		t.Errorf("tags %q want %q", n.Tags, want)
	}
}

func TestObsidianSyntax(t *testing.T) {
	tests := []struct {
		name        string
		src         string
		tags        []string
		text        string   // the sections' text, joined
		notText     []string // must not be in it
		title       string
		wantProp    string // a property key that must be parsed
		wantHeading string // the first section's heading
	}{
		{name: "emoji tags", src: "---\ntags: [🌲, \"#🍎/red\"]\n---\nRead #📚 and #👩‍💻 and #a❤️b, not #,x\n",
			tags: []string{"🌲", "🍎/red", "📚", "👩‍💻", "a❤️b"}},
		{name: "decomposed tags are composed before lower case", src: "---\ntags: [I\u0307negöl]\n---\n#I\u0307zmir #cre\u0302pe\n",
			tags: []string{"inegöl", "izmir", "crêpe"}},
		{name: "a setext heading of two lines is one line", src: "title: Broken\ntags: [a, b\n---\nkiwi\n", text: "kiwi", wantHeading: "title: Broken tags: [a, b"},
		{name: "ASCII symbols end a tag", src: "#a+b #c=d #e|f\n", tags: []string{"a", "c", "e"}},
		{name: "BOM before frontmatter", src: "\ufeff---\ntitle: T\ntags: [x]\n---\nbody\n", title: "T", tags: []string{"x"}, wantProp: "title", text: "body"},
		{name: "block ids", src: "A fact ^abc-1\n\n- item\n\n^list-id\n", text: "A fact", notText: []string{"abc-1", "list-id", "^"}},
		{name: "math", src: "$$\n#mtag x^2\n$$\ntext $$a #b$$ after\n", text: "after", notText: []string{"mtag", "x^2"}},
		{name: "caret inside a word stays", src: "x^2 is not a block id\n", text: "x^2 is not a block id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := Parse("n.md", []byte(tt.src))
			if tt.tags != nil && !reflect.DeepEqual(n.Tags, tt.tags) {
				t.Errorf("tags %q, want %q", n.Tags, tt.tags)
			}
			if tt.wantHeading != "" && (len(n.Sections) == 0 || n.Sections[0].Heading != tt.wantHeading) {
				t.Errorf("sections %+v, want the heading %q", n.Sections, tt.wantHeading)
			}
			if tt.title != "" && n.Title != tt.title {
				t.Errorf("title %q, want %q", n.Title, tt.title)
			}
			if tt.wantProp != "" {
				if _, ok := n.Props[tt.wantProp]; !ok {
					t.Errorf("props %v lack %q", n.Props, tt.wantProp)
				}
			}
			var all []string
			for _, s := range n.Sections {
				all = append(all, s.Text)
			}
			text := strings.Join(all, "\n")
			if !strings.Contains(text, tt.text) {
				t.Errorf("text %q lacks %q", text, tt.text)
			}
			for _, x := range tt.notText {
				if strings.Contains(text, x) {
					t.Errorf("text %q holds %q", text, x)
				}
			}
		})
	}
}

func TestDisplay(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"[[Note]]", "Note"},
		{"[[Note|shown]]", "shown"},
		{"[[Note#Heading]]", "Note > Heading"},
		{"[[Note#^blk]]", "Note"},
		{"[[#Local]]", "Local"},
		{"![[img.png]] x", "img.png x"},
		{"[text](My%20Note.md) and [s](https://e.com \"t\")", "text and s"},
		{"a %%hidden%% b", "a   b"},
		{"fact ^id-1", "fact"},
		{"$$x$$y", " y"},
	} {
		if got := Display(tt.in); got != tt.want {
			t.Errorf("Display(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := DisplayProperty("[[Ada Lovelace|Ada]]"); got != "Ada (Ada Lovelace)" {
		t.Errorf("DisplayProperty = %q", got)
	}
}

func TestPropertyText(t *testing.T) {
	for _, tt := range []struct {
		in   any
		want string
	}{
		{"[[Ada Lovelace]]", "Ada Lovelace"},
		{"[[Ada Lovelace|Ada]]", "Ada Ada Lovelace"},
		{[]any{[]any{"Grace Hopper"}}, "Grace Hopper"}, // related: [[Grace Hopper]] unquoted is a YAML list
		{[]any{"a", 3, true}, "a\n3\ntrue"},
		{map[string]any{"b": "y", "a": "x"}, "x\ny"},
		{nil, ""},
	} {
		if got := PropertyText(tt.in); got != tt.want {
			t.Errorf("PropertyText(%#v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "---\n---\n", "---\ntags: [a, b]\n---\n# T\n#x [[y|z]]", "```\n#a\n", "## \n#", "%%#a%% [[", "\xff\x00---", "\ufeff---\ntags: [🌲]\n---\n#📚 ^id $$#m$$", "#I\u0307zmir #Cre\u0302pe", "#\u0130\u03020"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		n := Parse("f.md", []byte(src))
		for _, s := range n.Sections {
			if !utf8.ValidString(s.Text) {
				t.Fatalf("invalid utf8 text")
			}
			if s.EndLine < s.Line {
				t.Fatalf("section lines %d..%d", s.Line, s.EndLine)
			}
		}
		// The title falls back to the file name, so it is never empty.
		if n.Title == "" {
			t.Fatal("no title")
		}
		for _, tag := range n.Tags {
			if tag == "" || strings.ContainsAny(tag, " \t\n#,") {
				t.Fatalf("tag %q", tag)
			}
			// A tag is in its own normal form: composed, lower case.
			if normTag(tag) != tag {
				t.Fatalf("tag %q normalises to %q", tag, normTag(tag))
			}
		}
		if utf8.ValidString(src) && !utf8.ValidString(Display(src)) {
			t.Fatal("Display made valid text invalid")
		}
	})
}

// TestLastSectionEndsAtTheLastLine: a final newline starts no line, so the
// last section ends at the text's last line — a log entry's section must
// not reach into the next entry's header.
func TestLastSectionEndsAtTheLastLine(t *testing.T) {
	for _, tc := range []struct {
		text string
		end  int
	}{
		{"### a\n<!-- x -->\n\n", 3},
		{"### a\n<!-- x -->\n", 2},
		{"### a\n<!-- x -->", 2},
		{"# T\n\ntext\n\n## B\nmore\n", 6},
		{"# T\r\n\r\ntext\r\n", 3},
		{"one line", 1},
	} {
		n := Parse("x.md", []byte(tc.text))
		if len(n.Sections) == 0 {
			t.Fatalf("%q: no sections", tc.text)
		}
		if got := n.Sections[len(n.Sections)-1].EndLine; got != tc.end {
			t.Errorf("%q: last section ends at line %d, want %d", tc.text, got, tc.end)
		}
	}
}
