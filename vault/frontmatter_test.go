package vault

import (
	"bytes"
	"strings"
	"testing"
)

func TestSplitFrontmatter(t *testing.T) {
	tests := []struct {
		name, in, fm, body string
		ok                 bool
	}{
		{"basic", "---\na: 1\n---\nbody\n", "a: 1\n", "body\n", true},
		{"crlf", "---\r\na: 1\r\n---\r\nbody", "a: 1\r\n", "body", true},
		{"empty block", "---\n---\nbody", "", "body", true},
		{"no close", "---\na: 1\nbody", "", "---\na: 1\nbody", false},
		{"not first line", "\n---\na: 1\n---\n", "", "\n---\na: 1\n---\n", false},
		{"close at eof", "---\na: 1\n---", "a: 1\n", "", true},
		{"hr later", "# T\n---\nx\n---\n", "", "# T\n---\nx\n---\n", false},
		{"none", "just text", "", "just text", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, body, ok := SplitFrontmatter([]byte(tt.in))
			if ok != tt.ok || string(fm) != tt.fm || string(body) != tt.body {
				t.Fatalf("got (%q, %q, %v), want (%q, %q, %v)", fm, body, ok, tt.fm, tt.body, tt.ok)
			}
		})
	}
}

func TestSetPropertyChangesOnlyThatKey(t *testing.T) {
	tests := []struct {
		name, in, key, val, want string
	}{
		{"replace scalar",
			"---\n# comment kept\nid: r-1\nstatus: pending   # old\ntags:\n  - a\n---\nbody **kept**\n",
			"status", "approved",
			"---\n# comment kept\nid: r-1\nstatus: approved\ntags:\n  - a\n---\nbody **kept**\n"},
		{"replace list value",
			"---\ntags:\n  - a\n  - b\nname: x\n---\n", "tags", "c",
			"---\ntags: c\nname: x\n---\n"},
		{"add key", "---\na: 1\n---\nb", "status", "rejected", "---\na: 1\nstatus: rejected\n---\nb"},
		{"no frontmatter", "# Note\n", "status", "x", "---\nstatus: x\n---\n# Note\n"},
		{"quotes when needed", "---\na: 1\n---\n", "why", "no: really", "---\na: 1\nwhy: 'no: really'\n---\n"},
		{"korean", "---\na: 1\n---\n", "why", "사용자는 영어를 씀", "---\na: 1\nwhy: 사용자는 영어를 씀\n---\n"},
		{"crlf", "---\r\na: 1\r\nstatus: p\r\n---\r\nb\r\n", "status", "ok", "---\r\na: 1\r\nstatus: ok\r\n---\r\nb\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SetProperty([]byte(tt.in), tt.key, tt.val)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got\n%q\nwant\n%q", got, tt.want)
			}
			props, _, err := ParseFrontmatter(got)
			if err != nil {
				t.Fatalf("result does not parse: %v", err)
			}
			if props[tt.key] != tt.val {
				t.Fatalf("%s = %v, want %q", tt.key, props[tt.key], tt.val)
			}
		})
	}
	if _, err := SetProperty([]byte("x"), "k", "two\nlines"); err == nil {
		t.Fatal("multi-line value accepted")
	}
}

func FuzzSetProperty(f *testing.F) {
	f.Add([]byte("---\nstatus: pending\n---\nbody"), "status", "approved")
	f.Add([]byte("---\r\na: [1, 2]\r\n---\r\n"), "a", "x")
	f.Add([]byte("no fm"), "k", "")
	f.Add([]byte("---\n- list\n---\n"), "k", "v")
	f.Fuzz(func(t *testing.T, data []byte, key, val string) {
		if key == "" || strings.ContainsAny(key, ":\n\r#'\"- \t{}[]&*!|>%@`,?") || strings.TrimSpace(key) != key {
			return
		}
		out, err := SetProperty(data, key, val)
		if err != nil {
			return
		}
		_, body, ok := SplitFrontmatter(out)
		if !ok {
			t.Fatalf("no frontmatter after SetProperty: %q", out)
		}
		// Where the frontmatter was valid YAML before, it still is, and the
		// key now holds exactly the value that was set.
		if _, _, err := ParseFrontmatter(data); err == nil {
			props, _, err := ParseFrontmatter(out)
			if err != nil {
				t.Fatalf("valid frontmatter made invalid: %v\n%q\n%q", err, data, out)
			}
			if props[key] != val {
				t.Fatalf("%s = %#v after setting %q:\n%q", key, props[key], val, out)
			}
		}
		// The body is kept byte for byte.
		_, oldBody, had := SplitFrontmatter(data)
		if !had {
			oldBody = data
		}
		if !bytes.Equal(body, oldBody) {
			t.Fatalf("body changed:\n%q\n%q", oldBody, body)
		}
	})
}

func FuzzSplitFrontmatter(f *testing.F) {
	f.Add([]byte("---\na: 1\n---\nbody"))
	f.Add([]byte("---\r\n---\r\n"))
	f.Add([]byte("---"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fm, body, ok := SplitFrontmatter(data)
		if !ok {
			if !bytes.Equal(body, data) {
				t.Fatal("body differs from data without frontmatter")
			}
			return
		}
		if len(fm)+len(body) > len(data) || !bytes.HasSuffix(data, body) {
			t.Fatalf("split does not partition the input: %q -> %q %q", data, fm, body)
		}
		ParseFrontmatter(data) // must not panic
	})
}
