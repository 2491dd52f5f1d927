package agents

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/internal/editsim"
	"github.com/nexus-memory/nexus/vault"
)

var factNow = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

// mustFactVault returns a new vault with agent lyra.
func mustFactVault(tb testing.TB) *vault.Vault {
	tb.Helper()
	v, _, err := vault.Init(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := Add(v, "lyra", "tester", factNow); err != nil {
		tb.Fatal(err)
	}
	return v
}

func mustWriteFact(tb testing.TB, v *vault.Vault, in FactInput) Fact {
	tb.Helper()
	f, err := WriteFact(v, "lyra", in, factNow)
	if err != nil {
		tb.Fatalf("WriteFact(%q): %v", in.Name, err)
	}
	return f
}

func readIndex(tb testing.TB, v *vault.Vault) string {
	tb.Helper()
	data, err := os.ReadFile(v.MustPath(HomePath("lyra", IndexFile)))
	if err != nil && !os.IsNotExist(err) {
		tb.Fatal(err)
	}
	return string(data)
}

func TestSlugify(t *testing.T) {
	tests := []struct {
		name, want string
		bad        bool
	}{
		{name: "Staging SSH", want: "staging-ssh"},
		{name: "  Staging   SSH!! ", want: "staging-ssh"},
		{name: "배포 규칙", want: "배포-규칙"},
		{name: "배포 규칙", want: "배포-규칙"}, // decomposed jamo compose under NFC
		{name: "PR 설명은 한국어로", want: "pr-설명은-한국어로"},
		{name: "Ünïcödé Façade", want: "ünïcödé-façade"},
		{name: "../../etc/passwd", want: "etc-passwd"},
		{name: "C:\\Windows\\x", want: "c-windows-x"},
		{name: "v2.0 release", want: "v2-0-release"},
		{name: "日本語のメモ", want: "日本語のメモ"},
		{name: strings.Repeat("a", 100), want: strings.Repeat("a", 64)},
		{name: "!!!", bad: true},
		{name: "   ", bad: true},
		{name: "🙂🙂", bad: true},
		{name: "", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Slugify(tt.name)
			if tt.bad {
				if !errors.Is(err, vault.ErrInvalid) {
					t.Fatalf("Slugify(%q) = %q, %v; want ErrInvalid", tt.name, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Slugify(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
			}
		})
	}
}

func TestWriteReadListRemoveFact(t *testing.T) {
	v := mustFactVault(t)
	f := mustWriteFact(t, v, FactInput{Name: "Staging SSH", Description: "staging host needs port 2222", Type: "project",
		Body: "Staging (10.0.1.50) listens on 2222.", Source: "log:2026-11-29T02:11Z"})
	if f.Slug != "staging-ssh" || f.Path != "agents/lyra/memory/staging-ssh.md" {
		t.Fatalf("fact = %+v", f)
	}
	data, err := os.ReadFile(v.MustPath(f.Path))
	if err != nil {
		t.Fatal(err)
	}
	want := "---\nname: Staging SSH\ndescription: staging host needs port 2222\ntype: project\ncreated: \"2026-11-29T15:00:00Z\"\nupdated: \"2026-11-29T15:00:00Z\"\nsource: log:2026-11-29T02:11Z\n---\nStaging (10.0.1.50) listens on 2222.\n"
	if string(data) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", data, want)
	}
	ko := mustWriteFact(t, v, FactInput{Name: "배포 규칙", Description: "금요일 배포 금지", Type: "feedback", Body: "금요일에는 배포하지 않는다."})
	if ko.Slug != "배포-규칙" {
		t.Fatalf("korean slug = %q", ko.Slug)
	}
	if got, want := readIndex(t, v), "- [[staging-ssh|Staging SSH]] — staging host needs port 2222\n- [[배포-규칙|배포 규칙]] — 금요일 배포 금지\n"; got != want {
		t.Fatalf("INDEX.md:\n%s\nwant:\n%s", got, want)
	}
	for _, key := range []string{"staging-ssh", "Staging SSH", "staging-ssh.md", "배포 규칙"} {
		got, err := ReadFact(v, "lyra", key)
		if err != nil {
			t.Fatalf("ReadFact(%q): %v", key, err)
		}
		if key != "배포 규칙" && (got.Body != "Staging (10.0.1.50) listens on 2222." || got.Type != "project" || !got.Created.Equal(factNow)) {
			t.Fatalf("ReadFact(%q) = %+v", key, got)
		}
	}
	list, err := ListFacts(v, "lyra")
	if err != nil || len(list) != 2 || list[0].Slug != "staging-ssh" || list[1].Name != "배포 규칙" {
		t.Fatalf("ListFacts = %+v, %v", list, err)
	}
	arch, err := RemoveFact(v, "lyra", "staging-ssh", factNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if arch != "review/archive/facts/lyra/staging-ssh.20261129T160000Z.md" {
		t.Fatalf("archive = %s", arch)
	}
	moved, err := os.ReadFile(v.MustPath(arch))
	if err != nil || string(moved) != want {
		t.Fatalf("archived bytes differ: %q, %v", moved, err)
	}
	if _, err := ReadFact(v, "lyra", "staging-ssh"); !errors.Is(err, ErrNoFact) {
		t.Fatalf("read removed fact: %v", err)
	}
	if got := readIndex(t, v); got != "- [[배포-규칙|배포 규칙]] — 금요일 배포 금지\n" {
		t.Fatalf("INDEX.md after remove:\n%s", got)
	}
	// The same fact written and archived again in the same second.
	mustWriteFact(t, v, FactInput{Name: "Staging SSH", Description: "again", Type: "project", Body: "again"})
	arch2, err := RemoveFact(v, "lyra", "staging-ssh", factNow.Add(time.Hour))
	if err != nil || arch2 != "review/archive/facts/lyra/staging-ssh.20261129T160000Z-2.md" {
		t.Fatalf("second archive = %q, %v", arch2, err)
	}
	if first, _ := os.ReadFile(v.MustPath(arch)); string(first) != want {
		t.Fatal("second archive overwrote the first")
	}
}

func TestWriteFactDuplicateAndUpdate(t *testing.T) {
	v := mustFactVault(t)
	mustWriteFact(t, v, FactInput{Name: "Deploy Rules", Description: "d1", Type: "project", Body: "b1"})
	path := v.MustPath(FactPath("lyra", "deploy-rules"))
	// A person adds a key by hand; an update must keep it.
	data, _ := os.ReadFile(path)
	data = []byte(strings.Replace(string(data), "type: project\n", "type: project\ntags: [ops]\n", 1))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	_, err := WriteFact(v, "lyra", FactInput{Name: "deploy  RULES", Description: "d2", Type: "project", Body: "b2"}, factNow)
	if !errors.Is(err, ErrFactExists) || !errors.Is(err, vault.ErrRefused) {
		t.Fatalf("duplicate: %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("duplicate write changed the file")
	}
	f, err := WriteFact(v, "lyra", FactInput{Name: "Deploy Rules", Description: "d2", Type: "feedback", Body: "b2", Update: true}, factNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if f.Slug != "deploy-rules" || f.Body != "b2" || f.Type != "feedback" || !f.Created.Equal(factNow) || !f.Updated.Equal(factNow.Add(time.Hour)) {
		t.Fatalf("updated = %+v", f)
	}
	got, _ := os.ReadFile(path)
	want := "---\nname: Deploy Rules\ndescription: d2\ntype: feedback\ntags: [ops]\ncreated: \"2026-11-29T15:00:00Z\"\nupdated: \"2026-11-29T16:00:00Z\"\n---\nb2\n"
	if string(got) != want {
		t.Fatalf("updated file:\n%s\nwant:\n%s", got, want)
	}
	// A different name with the same slug gets a suffix.
	g := mustWriteFact(t, v, FactInput{Name: "deploy-rules", Description: "other", Type: "project", Body: "x"})
	if g.Slug != "deploy-rules-2" {
		t.Fatalf("colliding slug = %q", g.Slug)
	}
	// "Index" may not take INDEX.md.
	if h := mustWriteFact(t, v, FactInput{Name: "Index", Description: "x", Type: "reference", Body: "x"}); h.Slug != "index-2" {
		t.Fatalf("reserved slug = %q", h.Slug)
	}
}

func TestWriteFactBadInput(t *testing.T) {
	v := mustFactVault(t)
	ok := FactInput{Name: "N", Description: "d", Type: "user", Body: "b"}
	tests := []struct {
		name string
		mod  func(*FactInput)
	}{
		{"slugs to nothing", func(in *FactInput) { in.Name = "!!! ???" }},
		{"empty name", func(in *FactInput) { in.Name = "  " }},
		{"empty body", func(in *FactInput) { in.Body = "\n\n" }},
		{"1 MB body", func(in *FactInput) { in.Body = strings.Repeat("x", 1<<20) }},
		{"two-line description", func(in *FactInput) { in.Description = "a\nb" }},
		{"long name", func(in *FactInput) { in.Name = strings.Repeat("가", MaxFactNameRunes+1) }},
		{"bad type", func(in *FactInput) { in.Type = "secret" }},
		{"invalid utf8", func(in *FactInput) { in.Body = "a\xffb" }},
		{"nul", func(in *FactInput) { in.Body = "a\x00b" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ok
			tt.mod(&in)
			_, err := WriteFact(v, "lyra", in, factNow)
			if !errors.Is(err, vault.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
		})
	}
	if _, err := WriteFact(v, "../x", ok, factNow); !errors.Is(err, vault.ErrInvalid) {
		t.Fatalf("bad agent: %v", err)
	}
	if _, err := WriteFact(v, "nobody", ok, factNow); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("unknown agent: %v", err)
	}
	entries, _ := os.ReadDir(v.MustPath(HomePath("lyra", FactsDir)))
	if len(entries) != 0 {
		t.Fatalf("bad input wrote %d files", len(entries))
	}
	// Korean counts code points: 120 syllables fit.
	in := ok
	in.Name = strings.Repeat("가", MaxFactNameRunes)
	if _, err := WriteFact(v, "lyra", in, factNow); err != nil {
		t.Fatalf("120 Korean syllables: %v", err)
	}
}

// TestIndexFollowsDisk edits the memory folder directly, as a person in
// Obsidian does, and checks that INDEX.md follows exactly.
func TestIndexFollowsDisk(t *testing.T) {
	v := mustFactVault(t)
	mustWriteFact(t, v, FactInput{Name: "Alpha", Description: "first", Type: "user", Body: "a"})
	dir := v.MustPath(HomePath("lyra", FactsDir))
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name string
		do   func()
		want string
	}{
		{"create by hand", func() {
			write("beta.md", "---\nname: Beta\ndescription: by hand\ntype: reference\n---\nbody\n")
		}, "- [[alpha|Alpha]] — first\n- [[beta|Beta]] — by hand\n"},
		{"create without frontmatter", func() {
			write("Gamma Notes.md", "# Gamma\n\nsome text\n")
		}, "- [[Gamma Notes|Gamma Notes]] — Gamma\n- [[alpha|Alpha]] — first\n- [[beta|Beta]] — by hand\n"},
		{"edit description (same size)", func() {
			write("beta.md", "---\nname: Beta\ndescription: by HAND\ntype: reference\n---\nbody\n")
		}, "- [[Gamma Notes|Gamma Notes]] — Gamma\n- [[alpha|Alpha]] — first\n- [[beta|Beta]] — by HAND\n"},
		{"rename", func() {
			if err := os.Rename(filepath.Join(dir, "beta.md"), filepath.Join(dir, "beta-renamed.md")); err != nil {
				t.Fatal(err)
			}
		}, "- [[Gamma Notes|Gamma Notes]] — Gamma\n- [[alpha|Alpha]] — first\n- [[beta-renamed|Beta]] — by HAND\n"},
		{"delete", func() {
			if err := os.Remove(filepath.Join(dir, "Gamma Notes.md")); err != nil {
				t.Fatal(err)
			}
		}, "- [[alpha|Alpha]] — first\n- [[beta-renamed|Beta]] — by HAND\n"},
		{"hidden and non-md ignored", func() {
			write(".draft.md", "x")
			write("notes.txt", "x")
		}, "- [[alpha|Alpha]] — first\n- [[beta-renamed|Beta]] — by HAND\n"},
	}
	for _, s := range steps {
		s.do()
		if err := SyncIndex(v, "lyra"); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := readIndex(t, v); got != s.want {
			t.Fatalf("%s: INDEX.md:\n%s\nwant:\n%s", s.name, got, s.want)
		}
	}
	// Unchanged: INDEX.md is not rewritten.
	ip := v.MustPath(HomePath("lyra", IndexFile))
	old := time.Now().Add(-time.Hour)
	os.Chtimes(ip, old, old)
	if err := SyncIndex(v, "lyra"); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(ip); !st.ModTime().Equal(old) {
		t.Fatal("INDEX.md rewritten without a change")
	}
	// A lost cache is rebuilt with the same index.
	os.Remove(cachePath(v, "lyra"))
	if err := SyncIndex(v, "lyra"); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(ip); !st.ModTime().Equal(old) {
		t.Fatal("INDEX.md rewritten after cache rebuild")
	}
}

func TestIndexLimit(t *testing.T) {
	v := mustFactVault(t)
	if err := v.UpdateConfig(func(c *vault.Config) error { c.MemoryIndexLineLimit = 3; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b-1", "b-2"} {
		mustWriteFact(t, v, FactInput{Name: n, Description: n, Type: "user", Body: n})
	}
	_, err := WriteFact(v, "lyra", FactInput{Name: "d", Description: "d", Type: "user", Body: "d"}, factNow)
	if !errors.Is(err, ErrIndexFull) || !strings.Contains(err.Error(), "merge") || !strings.Contains(err.Error(), "fact remove") ||
		!strings.Contains(err.Error(), "least recently updated: a, b-1, b-2") || !strings.Contains(err.Error(), "belong together: b-* (2)") {
		t.Fatalf("over limit: %v", err)
	}
	if _, err := os.Stat(v.MustPath(FactPath("lyra", "d"))); !os.IsNotExist(err) {
		t.Fatal("refused fact was written")
	}
	// Updates still work at the limit.
	if _, err := WriteFact(v, "lyra", FactInput{Name: "a", Description: "a2", Type: "user", Body: "a", Update: true}, factNow); err != nil {
		t.Fatal(err)
	}
	// A person adds a fourth by hand: the index stays at 3 lines and says so.
	os.WriteFile(v.MustPath(FactPath("lyra", "e")), []byte("e\n"), 0o644)
	err = SyncIndex(v, "lyra")
	if !errors.Is(err, ErrIndexFull) {
		t.Fatalf("sync over limit: %v", err)
	}
	idx := readIndex(t, v)
	if n := strings.Count(idx, "\n"); n != 3 || !strings.Contains(idx, "2 more facts not listed") {
		t.Fatalf("capped index (%d lines):\n%s", n, idx)
	}
	r, err := RenderIndex(v, "lyra")
	if err != nil || !strings.Contains(r, IndexBanner+" [3/3 lines]") {
		t.Fatalf("RenderIndex = %q, %v", r, err)
	}
}

func TestRenderIndexEmpty(t *testing.T) {
	v := mustFactVault(t)
	r, err := RenderIndex(v, "lyra")
	if err != nil || r != "" {
		t.Fatalf("RenderIndex of no facts = %q, %v", r, err)
	}
	if _, err := os.Stat(v.MustPath(HomePath("lyra", IndexFile))); !os.IsNotExist(err) {
		t.Fatal("INDEX.md created with no facts")
	}
}

func TestParseFactLenient(t *testing.T) {
	tests := []struct {
		name, in          string
		wantName, wantDes string
	}{
		{"full", "---\nname: N\ndescription: D\ntype: User\n---\nbody", "N", "D"},
		{"crlf", "---\r\nname: N\r\ndescription: D\r\n---\r\nbody\r\n", "N", "D"},
		{"no frontmatter", "# Title\nmore", "slug", "Title"},
		{"bad yaml", "---\nname: [\n---\nline", "slug", "line"},
		{"list name", "---\nname: [a, b]\n---\n", "a, b", ""},
		{"multiline description", "---\ndescription: |\n  a\n  b\n---\n", "slug", "a b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFact("slug", []byte(tt.in))
			if err != nil || f.Name != tt.wantName || f.Description != tt.wantDes {
				t.Fatalf("ParseFact = %+v, %v", f, err)
			}
		})
	}
	if _, err := ParseFact("s", []byte("\xff")); !errors.Is(err, vault.ErrInvalid) {
		t.Fatalf("invalid utf8: %v", err)
	}
}

func FuzzParseFact(f *testing.F) {
	for _, s := range []string{
		"---\nname: N\ndescription: D\ntype: user\ncreated: 2026-11-29T15:00:00Z\n---\nbody\n",
		"no frontmatter",
		"---\nname: [\n---\n",
		"---\r\nname: 배포\r\n---\r\n본문",
		"---\n---\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fact, err := ParseFact("slug", []byte(s))
		if err != nil {
			return
		}
		if strings.ContainsAny(fact.Name+fact.Description+fact.Type, "\n\r") {
			t.Fatalf("multi-line field: %+v", fact)
		}
		// One line, starting with an intact link to the slug; the
		// description may hold links of its own.
		line := IndexLine(fact.Slug, fact.Name, fact.Description)
		link, _, ok := strings.Cut(strings.TrimPrefix(line, "- [[slug|"), "]]")
		if strings.Contains(line, "\n") || !strings.HasPrefix(line, "- [[slug|") || !ok || link == "" || strings.ContainsAny(link, "[]|") {
			t.Fatalf("index line %q", line)
		}
	})
}

func FuzzFactCache(f *testing.F) {
	f.Add(cacheHeader + " tok\na.md\t1\t2\t3\t4\tuser\tA\tdesc\tsrc\nb.md\t-1\t0\t0\t0\t\t\t\t\n")
	f.Add("garbage")
	f.Fuzz(func(t *testing.T, s string) {
		c := parseFactCache([]byte(s))
		if c == nil {
			return
		}
		again := parseFactCache(c.encode())
		if again == nil || again.len() != c.len() || len(again.files) != again.len() || !sort.StringsAreSorted(again.files) {
			t.Fatalf("round trip changed the cache: %+v != %+v", again, c)
		}
		for _, f := range c.files {
			if e, ok := again.get(f); !ok || e.Name != c.m[f].Name || e.Size != c.m[f].Size {
				t.Fatalf("entry %q lost or changed", f)
			}
		}
	})
}

// TestFactCacheJournal checks that the appended cache, read back cold by
// another process (no memo), says exactly what the folder holds.
func TestFactCacheJournal(t *testing.T) {
	v := mustFactVault(t)
	for i := range 60 {
		mustWriteFact(t, v, FactInput{Name: fmt.Sprintf("fact %d", i), Description: "d", Type: "user", Body: "b"})
	}
	for i := range 20 {
		if _, err := RemoveFact(v, "lyra", fmt.Sprintf("fact-%d", i), factNow.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := WriteFact(v, "lyra", FactInput{Name: "fact 30", Description: "changed", Type: "user", Body: "b2", Update: true}, factNow); err != nil {
		t.Fatal(err)
	}
	memos.Range(func(k, _ any) bool { memos.Delete(k); return true })
	data, err := os.ReadFile(cachePath(v, "lyra"))
	if err != nil {
		t.Fatal(err)
	}
	c := parseFactCache(data)
	if c == nil || c.len() != 40 {
		t.Fatalf("cold cache holds %v entries, want 40", c)
	}
	if c.records > 2*c.len()+64 {
		t.Fatalf("cache never compacted: %d records for %d entries", c.records, c.len())
	}
	if e, ok := c.get("fact-30.md"); !ok || e.Description != "changed" {
		t.Fatalf("updated entry = %+v", e)
	}
	if _, ok := c.get("fact-3.md"); ok {
		t.Fatal("removed fact still cached")
	}
	// A torn tail makes the cache unusable, not wrong.
	if parseFactCache(data[:len(data)-3]) != nil {
		t.Fatal("torn cache accepted")
	}
}

// TestFactWriteTouchesOnlyItsFiles: a write changes the fact file and
// INDEX.md, a remove moves one file and changes INDEX.md; every other file
// outside .nexus/ keeps its bytes and mtime.
func TestFactWriteTouchesOnlyItsFiles(t *testing.T) {
	v := mustFactVault(t)
	os.WriteFile(v.MustPath("projects/plan.md"), []byte("# Plan\n"), 0o644)
	mustWriteFact(t, v, FactInput{Name: "Alpha", Description: "a", Type: "user", Body: "a"})
	mustWriteFact(t, v, FactInput{Name: "Beta", Description: "b", Type: "user", Body: "b"})
	type state struct {
		data  string
		mtime time.Time
	}
	tree := func() map[string]state {
		out := map[string]state{}
		filepath.WalkDir(v.Root(), func(p string, d os.DirEntry, err error) error {
			rel, _ := v.Rel(p)
			if d.IsDir() {
				if rel == vault.NexusDir {
					return filepath.SkipDir
				}
				return nil
			}
			data, _ := os.ReadFile(p)
			info, _ := d.Info()
			out[rel] = state{string(data), info.ModTime()}
			return nil
		})
		return out
	}
	check := func(before, after map[string]state, allowed ...string) {
		t.Helper()
		ok := map[string]bool{}
		for _, a := range allowed {
			ok[a] = true
		}
		for p, b := range before {
			if a, found := after[p]; (!found || a != b) && !ok[p] {
				t.Errorf("%s changed", p)
			}
		}
		for p := range after {
			if _, found := before[p]; !found && !ok[p] {
				t.Errorf("%s appeared", p)
			}
		}
	}
	before := tree()
	mustWriteFact(t, v, FactInput{Name: "Gamma", Description: "g", Type: "user", Body: "g"})
	after := tree()
	check(before, after, FactPath("lyra", "gamma"), HomePath("lyra", IndexFile))
	arch, err := RemoveFact(v, "lyra", "alpha", factNow)
	if err != nil {
		t.Fatal(err)
	}
	check(after, tree(), FactPath("lyra", "alpha"), arch, HomePath("lyra", IndexFile))
	// A refused write touches nothing.
	before = tree()
	if _, err := WriteFact(v, "lyra", FactInput{Name: "Beta", Description: "b", Type: "user", Body: "b"}, factNow); !errors.Is(err, ErrFactExists) {
		t.Fatal(err)
	}
	check(before, tree())
}

// TestIndexSpliceMatchesFullRender: lines spliced in and out by put and del
// give exactly the full render.
func TestIndexSpliceMatchesFullRender(t *testing.T) {
	c := newFactCache()
	st := &factStore{entries: c}
	full := func() string {
		fresh := &factCache{m: c.m, files: c.files}
		data, _ := (&factStore{entries: fresh}).renderIndex(1 << 20)
		return string(data)
	}
	st.renderIndex(1 << 20) // start splicing from an empty, valid render
	for i := range 300 {
		file := fmt.Sprintf("f-%03d.md", (i*37)%101)
		switch i % 5 {
		case 0, 1, 2:
			c.put(file, &cacheEntry{Name: fmt.Sprintf("n%d", i), Description: strings.Repeat("d", i%7)})
		case 3:
			c.del(file)
		case 4:
			c.del("missing.md")
		}
		got, _ := st.renderIndex(1 << 20)
		if want := full(); string(got) != want {
			t.Fatalf("step %d: spliced index differs:\n%s\nwant:\n%s", i, got, want)
		}
	}
}

func TestIndexLineKeepsLinkBreakingCharacters(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"Has | pipe", "- [[s|Has ｜ pipe]] — d"},
		{"[draft] plan", "- [[s|［draft］ plan]] — d"},
		{"배포 [[규칙]]", "- [[s|배포 ［［규칙］］]] — d"},
		{"  ", "- [[s|s]] — d"},
	} {
		if got := IndexLine("s", tt.name, "d"); got != tt.want {
			t.Errorf("IndexLine(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestFactUpdateDuringInPlaceSave: a person saves a fact file in place, as
// Obsidian does (truncate, then write through the same handle), while an
// agent updates the same fact. The update waits for the save and builds on
// it: no "-2" duplicate, and the person's frontmatter survives.
func TestFactUpdateDuringInPlaceSave(t *testing.T) {
	v := mustFactVault(t)
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	f, err := WriteFact(v, "lyra", FactInput{Name: "Deploy rule", Description: "staging first", Type: FactFeedback, Body: "Deploy to staging first."}, now)
	if err != nil {
		t.Fatal(err)
	}
	p := v.MustPath(f.Path)
	saved, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	personal := strings.Replace(string(saved), "---\n", "---\nreviewed: yes\n", 1)
	done, err := editsim.SaveInPlace(p, personal, 150*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	got, err := WriteFact(v, "lyra", FactInput{Name: "Deploy rule", Description: "staging, then canary", Type: FactFeedback, Body: "Staging, then a canary.", Update: true}, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got.Slug != f.Slug {
		t.Fatalf("update went to %s, want %s", got.Slug, f.Slug)
	}
	if _, err := os.Stat(v.MustPath(FactPath("lyra", f.Slug+"-2"))); err == nil {
		t.Fatal("a -2 duplicate was made")
	}
	data, _ := os.ReadFile(p)
	if !strings.Contains(string(data), "reviewed: yes") || !strings.Contains(string(data), "staging, then canary") {
		t.Fatalf("after the update:\n%s", data)
	}
}
