package canvas

import (
	"testing"
)

const sample = `{
	"nodes":[
		{"id":"a1","type":"text","text":"Kettle **plan**\nsee [[Teapot]]","x":0,"y":0,"width":250,"height":60},
		{"id":"b2","type":"file","file":"Notes/Ada Lovelace.md","subpath":"#Life","x":300,"y":0,"width":400,"height":400},
		{"id":"c3","type":"link","url":"https://example.com","x":0,"y":300,"width":400,"height":400},
		{"id":"d4","type":"group","label":"Brewing ideas","x":-50,"y":-50,"width":900,"height":900}
	],
	"edges":[{"id":"e1","fromNode":"a1","toNode":"b2"}]
}
`

func TestParse(t *testing.T) {
	nodes := Parse([]byte(sample))
	want := []struct {
		typ, text, file, label string
		line                   int
	}{
		{"text", "Kettle **plan**\nsee [[Teapot]]", "", "", 3},
		{"file", "", "Notes/Ada Lovelace.md", "", 4},
		{"link", "", "", "", 5},
		{"group", "", "", "Brewing ideas", 6},
	}
	if len(nodes) != len(want) {
		t.Fatalf("got %d nodes, want %d: %+v", len(nodes), len(want), nodes)
	}
	for i, w := range want {
		n := nodes[i]
		if n.Type != w.typ || n.Text != w.text || n.File != w.file || n.Label != w.label || n.Line != w.line {
			t.Errorf("node %d = %+v, want %+v", i, n, w)
		}
	}
	if nodes[1].Subpath != "#Life" {
		t.Errorf("subpath = %q", nodes[1].Subpath)
	}
}

func TestParseOneLine(t *testing.T) {
	nodes := Parse([]byte(`{"edges":[],"nodes":[{"id":"x","type":"text","text":"hi"},{"id":"y","type":"group"}]}`))
	if len(nodes) != 2 || nodes[0].Line != 1 || nodes[1].Line != 1 || nodes[0].Text != "hi" {
		t.Fatalf("got %+v", nodes)
	}
}

func TestParseBad(t *testing.T) {
	for _, in := range []string{"", "[]", "{", `{"nodes":3}`, `{"nodes":[1,{"id":"a","type":"text","text":"ok"}]}`, `{"nodes":[{"id":`} {
		nodes := Parse([]byte(in))
		for _, n := range nodes {
			if n.Line < 1 {
				t.Errorf("%q: line %d", in, n.Line)
			}
		}
		if in == `{"nodes":[1,{"id":"a","type":"text","text":"ok"}]}` && (len(nodes) != 1 || nodes[0].Text != "ok") {
			t.Errorf("%q: a bad node should be skipped, the next kept: %+v", in, nodes)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte(`{"nodes":[{"type":"text","text":"\n\n"}]}`))
	f.Add([]byte(`{"nodes":[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, n := range Parse(data) {
			if n.Line < 1 || n.Line > 1+len(data) {
				t.Fatalf("line %d out of range for %d bytes", n.Line, len(data))
			}
		}
	})
}

func TestText(t *testing.T) {
	got := string(Text([]byte(sample)))
	want := "\n\nKettle **plan** see [[Teapot]]\nNotes/Ada Lovelace.md\n\nBrewing ideas\n\n\n\n"
	if got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
}
