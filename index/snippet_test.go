package index

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSnippetText: markup is dropped outside code and code is shown as
// written, its fences and backticks dropped.
func TestSnippetText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"The ==quokka== is ~~not~~ **a** marsupial[^1].", "The quokka is not a marsupial."},
		{"if a == b and c ~~ d", "if a == b and c ~~ d"},
		{"== spaced == and ~~ spaced ~~", "== spaced == and ~~ spaced ~~"},
		{"```js\nif (x === null) return a == b;\nconst re = /[^a-z]+/;\n```\nafter ==hi==", "\nif (x === null) return a == b;\nconst re = /[^a-z]+/;\n\nafter hi"},
		{"~~~\n> ls -la\n# not a heading\n~~~\n> quoted", "\n> ls -la\n# not a heading\n\nquoted"},
		{"```\nleft open ==x==", "\nleft open ==x=="},
		{"````\n```\nstill code __init__\n````\nout __bold__", "\n```\nstill code __init__\n\nout bold"},
		{"call `__init__` and `a == b` then ==mark==", "call __init__ and a == b then mark"},
		{"a ``code with ` tick`` b", "a code with ` tick b"},
		{"unclosed `tick and **bold**", "unclosed tick and bold"},
		{"# Heading `x` # y\n> quote `>` > z", "Heading x # y\nquote > > z"},
		{"line\r\nnext\r\n", "line\nnext\n"},
		{"```not a fence``` inline", "not a fence inline"},
	} {
		if got := snippetText([]byte(tc.in)); got != tc.want {
			t.Errorf("snippetText(%q) =\n%q, want\n%q", tc.in, got, tc.want)
		}
	}
}

func FuzzSnippetText(f *testing.F) {
	for _, s := range []string{"```\na\n```", "`a` ``b`` `", "==a== ~~b~~ [^1]", "> [!note]- x\n> y", "~~~~\n~~~\n~~~~", "\xff`\xfe`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := snippetText([]byte(s))
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("snippetText(%q) = %q: invalid UTF-8", s, got)
		}
		// Only markup is dropped: every letter of the text is kept, in
		// order, when the text has no link, comment, math, HTML entity
		// or fence line (whose info string is dropped) to show otherwise.
		if !strings.ContainsAny(s, "[]<>$%^!|#&\r\\") && !strings.Contains(s, "```") && !strings.Contains(s, "~~~") && utf8.ValidString(s) {
			if want, have := letters(s), letters(got); !strings.Contains(have, want) && have != want {
				t.Fatalf("snippetText(%q) = %q: letters %q, want %q", s, got, have, want)
			}
		}
	})
}

func letters(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
