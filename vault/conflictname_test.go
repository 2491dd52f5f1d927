package vault

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseConflictName(t *testing.T) {
	tests := []struct {
		name, orig, engine string
		strict, ok         bool
		device             string
	}{
		{"MEMORY.sync-conflict-20261201-101500-ABCDEF7.md", "MEMORY.md", EngineSyncthing, true, true, "ABCDEF7"},
		{"MEMORY.sync-conflict-20261201-101500.md", "MEMORY.md", EngineSyncthing, true, true, ""},
		{"config.sync-conflict-20261201-101500-ZZZZZZZ.yaml", "config.yaml", EngineSyncthing, true, true, "ZZZZZZZ"},
		{"a.b.sync-conflict-20261201-101500-ABCDEFG.md", "a.b.md", EngineSyncthing, true, true, "ABCDEFG"},
		{"NOEXT.sync-conflict-20261201-101500-ABCDEFG", "NOEXT", EngineSyncthing, true, true, "ABCDEFG"},
		{"메모.sync-conflict-20261201-101500-ABCDEFG.md", "메모.md", EngineSyncthing, true, true, "ABCDEFG"},
		{"MEMORY.sync-conflict-2026-101500.md", "", "", false, false, ""},
		{"MEMORY.sync-conflict-20261201-101500-ABCDEFG-x.md", "", "", false, false, ""},
		{"MEMORY (conflicted copy).md", "MEMORY.md", EngineDropbox, true, true, ""},
		{"MEMORY (Ann's conflicted copy 2026-12-01).md", "MEMORY.md", EngineDropbox, true, true, ""},
		{"r-1a2b3c (Conflicted Copy 2026-12-01 101500).md", "r-1a2b3c.md", EngineDropbox, true, true, ""},
		{"MEMORY (old).md", "", "", false, false, ""},
		{"MEMORY 2.md", "MEMORY.md", EngineNumbered, false, true, ""},
		{"Chapter 12.md", "Chapter.md", EngineNumbered, false, true, ""},
		{"Chapter 1.md", "", "", false, false, ""},
		{"Chapter 02.md", "", "", false, false, ""},
		{"Chapter 123.md", "", "", false, false, ""},
		{"MEMORY.md.orig", "MEMORY.md", EngineGit, false, true, ""},
		{"config.git-conflict-0a1b2c3d.yaml", "config.yaml", EngineGit, true, true, ""},
		{"config.git-conflict-0A1B2C3D.yaml", "", "", false, false, ""},
		{"MEMORY.md", "", "", false, false, ""},
		{".orig", "", "", false, false, ""},
		{"", "", "", false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, strict, ok := ParseConflictName(tt.name)
			if ok != tt.ok || strict != tt.strict || c.Original != tt.orig || c.Engine != tt.engine || c.Device != tt.device {
				t.Errorf("ParseConflictName(%q) = %+v, strict %v, ok %v; want original %q engine %q device %q strict %v ok %v",
					tt.name, c, strict, ok, tt.orig, tt.engine, tt.device, tt.strict, tt.ok)
			}
			if IsConflictCopy(tt.name) != (tt.ok && tt.strict) {
				t.Errorf("IsConflictCopy(%q) = %v", tt.name, !(tt.ok && tt.strict))
			}
		})
	}
}

func TestSplitConflictMarkers(t *testing.T) {
	tests := []struct {
		name               string
		in                 string
		ours, theirs, base string
		hasBase, ok, found bool
		conflicts          int
	}{
		{name: "none", in: "a\nb\n"},
		{name: "one block",
			in:   "top\n<<<<<<< HEAD\nmine\n=======\nyours\n>>>>>>> feature\nend\n",
			ours: "top\nmine\nend\n", theirs: "top\nyours\nend\n", ok: true, found: true, conflicts: 1},
		{name: "diff3",
			in:   "<<<<<<< ours\nA2\n||||||| base\nA\n=======\nA3\n>>>>>>> theirs\n",
			ours: "A2\n", theirs: "A3\n", base: "A\n", hasBase: true, ok: true, found: true, conflicts: 1},
		{name: "two blocks, no final newline",
			in:   "<<<<<<<\n1\n=======\n2\n>>>>>>>\nmid\n<<<<<<< x\n3\n=======\n4\n>>>>>>> y",
			ours: "1\nmid\n3\n", theirs: "2\nmid\n4\n", ok: true, found: true, conflicts: 2},
		{name: "CRLF kept",
			in:   "a\r\n<<<<<<< HEAD\r\nb\r\n=======\r\nc\r\n>>>>>>> o\r\n",
			ours: "a\r\nb\r\n", theirs: "a\r\nc\r\n", ok: true, found: true, conflicts: 1},
		{name: "inside a code fence",
			in: "# How git shows it\n```\n<<<<<<< HEAD\nmine\n=======\nyours\n>>>>>>> x\n```\n"},
		{name: "unclosed",
			in: "<<<<<<< HEAD\nmine\n=======\nyours\n", found: true, ours: "mine\n", theirs: "yours\n"},
		{name: "end before separator",
			in: "<<<<<<< HEAD\nmine\n>>>>>>> x\nmore\n", found: true, ours: "mine\nmore\n", theirs: ""},
		{name: "not a marker: longer run",
			in: "<<<<<<<<\n=======\n>>>>>>>>\n"},
		{name: "setext heading is not a separator", in: "Title\n=======\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok, found := SplitConflictMarkers([]byte(tt.in))
			if ok != tt.ok || found != tt.found || s.Conflicts != tt.conflicts {
				t.Fatalf("ok %v found %v conflicts %d; want %v %v %d", ok, found, s.Conflicts, tt.ok, tt.found, tt.conflicts)
			}
			if !found {
				return
			}
			if tt.ok && (string(s.Ours) != tt.ours || string(s.Theirs) != tt.theirs) {
				t.Errorf("ours %q theirs %q; want %q %q", s.Ours, s.Theirs, tt.ours, tt.theirs)
			}
			if (s.Base != nil) != tt.hasBase || string(s.Base) != tt.base {
				t.Errorf("base %q (nil %v); want %q", s.Base, s.Base == nil, tt.base)
			}
			if HasConflictMarkers([]byte(tt.in)) != (tt.conflicts > 0) {
				t.Errorf("HasConflictMarkers disagrees with Conflicts = %d", s.Conflicts)
			}
		})
	}
}

func TestSetAsideConflictedConfig(t *testing.T) {
	v, _, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(v.Root(), ConfigFile)
	marked := "memory_char_limit: 2200\n<<<<<<< HEAD\nuser_char_limit: 1000\n=======\nuser_char_limit: 1500\n>>>>>>> laptop\n"
	if err := os.WriteFile(p, []byte(marked), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(v.Root()); err == nil {
		t.Fatal("a config with markers opened; the test premise is wrong")
	}
	aside, err := SetAsideConflictedConfig(v.Root())
	if err != nil || !strings.HasPrefix(aside, ".nexus/config.git-conflict-") {
		t.Fatalf("SetAsideConflictedConfig = %q, %v", aside, err)
	}
	if got, _ := os.ReadFile(filepath.Join(v.Root(), aside)); string(got) != marked {
		t.Errorf("set-aside version %q, want the marked bytes", got)
	}
	v2, err := Open(v.Root())
	if err != nil {
		t.Fatalf("vault does not open after setting the config aside: %v", err)
	}
	if v2.Config().UserCharLimit != 1000 {
		t.Errorf("user_char_limit = %d, want the first side's 1000", v2.Config().UserCharLimit)
	}
	if c, strict, ok := ParseConflictName(filepath.Base(aside)); !ok || !strict || c.Original != "config.yaml" {
		t.Errorf("the set-aside name %s is not recognised as a conflict copy of config.yaml", aside)
	}
	// Nothing to do the second time.
	if again, err := SetAsideConflictedConfig(v.Root()); again != "" || err != nil {
		t.Errorf("second run = %q, %v; want nothing", again, err)
	}
}

func FuzzSplitConflictMarkers(f *testing.F) {
	f.Add([]byte("a\n<<<<<<< HEAD\nb\n||||||| base\nx\n=======\nc\n>>>>>>> o\nd"))
	f.Add([]byte("```\n<<<<<<<\n=======\n>>>>>>>\n```\n<<<<<<<\r\n=======\r\n>>>>>>>\r\n"))
	f.Add([]byte("<<<<<<< HEAD\n<<<<<<< HEAD\n=======\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, ok, found := SplitConflictMarkers(data)
		if !found {
			if s.Ours != nil || s.Conflicts != 0 {
				t.Fatal("sides without a conflict")
			}
			return
		}
		if len(s.Ours) > len(data) || len(s.Theirs) > len(data) || len(s.Base) > len(data) {
			t.Fatal("a side is longer than the input")
		}
		if ok && s.Conflicts == 0 {
			t.Fatal("well formed but no conflict")
		}
		// A side holds no marker that opens a block outside code.
		if ok {
			for _, side := range [][]byte{s.Ours, s.Theirs} {
				if t2, ok2, found2 := SplitConflictMarkers(side); found2 && ok2 && t2.Conflicts > 0 && !bytes.Contains(data, []byte("```")) && !bytes.Contains(data, []byte("~~~")) {
					t.Fatalf("side %q still holds a conflict", side)
				}
			}
		}
	})
}

func FuzzParseConflictName(f *testing.F) {
	f.Add("MEMORY.sync-conflict-20261201-101500-ABCDEF7.md")
	f.Add("MEMORY (Ann's conflicted copy 2026-12-01).md")
	f.Add("MEMORY 2.md")
	f.Add("x.git-conflict-0a1b2c3d.yaml")
	f.Fuzz(func(t *testing.T, name string) {
		c, _, ok := ParseConflictName(name)
		if !ok {
			return
		}
		if c.Original == "" || c.Original == name || len(c.Original) >= len(name) {
			t.Fatalf("ParseConflictName(%q).Original = %q", name, c.Original)
		}
	})
}
