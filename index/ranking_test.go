package index

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nexus-memory/nexus/index/indextest"
	"github.com/nexus-memory/nexus/vault"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// TestRankingGolden ranks a generated vault with planted properties,
// frontmatter-only notes and emoji tags (indextest Options.Conventions):
// every planted query finds exactly its notes, and the ranking of a fixed
// set of queries is kept in testdata/ranking.golden (go test -update
// rewrites it; read the diff: it is the change in ranking).
func TestRankingGolden(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := vault.Init(dir); err != nil {
		t.Fatal(err)
	}
	gv, err := indextest.Generate(dir, indextest.Options{Notes: 400, Seed: 11, Needles: true, Big: 1, Conventions: true})
	if err != nil {
		t.Fatal(err)
	}
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ix := mustOpen(t, v, Options{})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, p := range gv.Planted {
		res := mustSearch(t, ix, Query{Text: p.Query, Limit: 100})
		got := paths(res)
		want := append([]string(nil), p.Paths...)
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: found %q, want %q", p.Query, got, want)
		}
		for _, h := range res.Hits {
			if strings.TrimSpace(h.Snippet) == "" {
				t.Errorf("%s: %s has an empty snippet", p.Query, h.Path)
			}
		}
	}
	queries := []string{
		"Ada Lovelace",
		"Grace Hopper",
		`reading prop:author:"Alan Turing"`,
		"quokka",
		"inbox narwhal",
		"tag:🌲 axolotl",
		"tag:📚",
		"lovelace -tag:reading",
	}
	for _, n := range gv.Needles {
		queries = append(queries, n.Query)
	}
	var b strings.Builder
	for _, q := range queries {
		// Asked for more than shown, so a tie at the cut is decided by
		// path too.
		res := mustSearch(t, ix, Query{Text: q, Limit: 100})
		fmt.Fprintf(&b, "%s (%d)\n", q, res.Total)
		hits := rankOrder(res.Hits)
		for _, h := range hits[:min(8, len(hits))] {
			fmt.Fprintf(&b, "  %-12s %s:%d\n", h.Match, h.Path, h.Line)
		}
	}
	golden := filepath.Join("testdata", "ranking.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestRankingGolden -update)", err)
	}
	if b.String() != string(want) {
		t.Errorf("ranking changed (go test -run TestRankingGolden -update, then read the diff):\n%s", b.String())
	}
}

// rankOrder is the hits in rank order with ties (same match kind, scores
// equal to 6 digits) by path and line: the order of equal scores is bleve's, which
// depends on how documents fell into segments.
func rankOrder(hits []Hit) []Hit {
	out := append([]Hit(nil), hits...)
	key := func(h Hit) string { return fmt.Sprintf("%s %.6g", h.Match, h.Score) }
	for i := 0; i < len(out); {
		j := i + 1
		for j < len(out) && key(out[j]) == key(out[i]) {
			j++
		}
		run := out[i:j]
		sort.Slice(run, func(a, b int) bool {
			if run[a].Path != run[b].Path {
				return run[a].Path < run[b].Path
			}
			return run[a].Line < run[b].Line
		})
		i = j
	}
	return out
}

// TestTitleTierNeedsTheWholeWord: a title counts for the title tier
// only when it holds the whole query word — all of a CJK word's pairs,
// both parts of e-mail — not one pair of it.
func TestTitleTierNeedsTheWholeWord(t *testing.T) {
	v := mustVault(t, map[string]string{
		"blog.md":     "# 주간 블로그\n\n이번 주 블로그 인기 글 목록.\n",
		"incident.md": "# 로그인 장애\n\n실패가 계속된다.\n",
		"mail.md":     "# Mail server notes\n\nSend an e-mail to ops.\n",
		"email.md":    "# E-mail policy\n\nWho may send what.\n",
	})
	ix := mustOpen(t, v, Options{NoServe: true})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q     string
		match map[string]string // path: Hit.Match
	}{
		{"로그인", map[string]string{"incident.md": MatchTitle, "blog.md": MatchWords}},
		{"e-mail", map[string]string{"email.md": MatchTitle, "mail.md": MatchWords}},
	} {
		res := mustSearch(t, ix, Query{Text: c.q})
		got := map[string]string{}
		for _, h := range res.Hits {
			got[h.Path] = h.Match
		}
		for p, m := range c.match {
			if got[p] != m {
				t.Errorf("%s: %s matched %q, want %q (all: %v)", c.q, p, got[p], m, got)
			}
		}
		if len(res.Hits) == 0 || c.match[res.Hits[0].Path] != MatchTitle {
			t.Errorf("%s: first hit %v", c.q, paths(res))
		}
	}
}
