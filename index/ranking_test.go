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

// TestResultsAreNotes is the golden ranking of SPEC §5 "Results are
// notes": a long note of many sections competes with short notes, and a
// note is mentioned by others. Each note is one hit at most; the note a
// query names comes first; "every word" holds over a whole note; when no
// note holds every word, titles still count.
func TestResultsAreNotes(t *testing.T) {
	var handbook strings.Builder
	handbook.WriteString("# Kitchen handbook\n\n")
	for i := range 12 {
		fmt.Fprintf(&handbook, "## Part %d\n\n", i+1)
		switch i {
		case 2:
			handbook.WriteString("Descale the kettle monthly; the kettle lasts longer.\n\n")
		case 9:
			handbook.WriteString("Warm the teapot before brewing.\n\n")
		default:
			handbook.WriteString("The kettle sits on the shelf.\n\n")
		}
		handbook.WriteString(strings.Repeat("General filler about cupboards and drawers.\n", 8) + "\n")
	}
	v := mustVault(t, map[string]string{
		"Kettle.md":                 "# Kettle\n\nBoils water.\n",
		"mentions/breakfast.md":     "# Breakfast\n\nThe [[Kettle]] kettle whistled; a kettle, a kettle.\n",
		"mentions/shopping.md":      "# Shopping\n\nkettle descaler, kettle filter, kettle.\n",
		"handbook.md":               handbook.String(),
		"tea.md":                    "# Tea things\n\nThe kettle boiled; the teapot waited.\n",
		"teapot.md":                 "# Pottery\n\nA teapot, a teapot, another teapot.\n",
		"키움 API 가이드.md":             "# 개요\n\n주문 함수 목록.\n",
		"ko/mention1.md":            "# 메모\n\n키움 API 가이드를 참고. 키움 API 가이드 다시.\n",
		"ko/mention2.md":            "# 키움 API\n\n키움 API 가이드에 따르면 키움 API 가이드.\n",
		"References/Kevin Kelly.md": "# Clippings\n\nThe technium.\n",
		"mentions/kk.md":            "# Reading\n\nKevin Kelly wrote it. Kevin Kelly again, Kevin Kelly.\n",
		// Every query word in the title or the file name, not as a
		// phrase: the note about them, above notes that name it.
		"Wiki/Hermes-시스템-헌법-20260627.md": "# Hermes Agent 시스템 헌법 (Constitution)\n\n운영 원칙.\n",
		"Wiki/작업내역.md":                   "# 작업내역\n\nHermes 시스템 헌법 작성. Hermes 시스템 헌법 검토.\n",
		"index.md":                       "# 목차\n\n- Hermes 시스템 헌법\n- 메모리 계층\n",
		// Named by its title, above notes that only keep the name as
		// an alias (the help vault's translations).
		"en/Aliases.md": "# Aliases\n\nAdd aliases to a note; an alias is another name.\n" + strings.Repeat("Links use the alias as the note's name.\n", 20),
		// The words as a phrase in a heading: the post with a section
		// on them above a short note that says them once.
		"Notes/Usage.md":          "# Product usage\n\nAnalysis of cost per use.\n",
		"Clippings/Buy wisely.md": "# Buy wisely\n\nWhen I buy things I weigh what each use costs.\n\n## Cost per use\n\nDivide the price by the uses: cost per use.\n" + strings.Repeat("Durable things cost more upfront and less over time.\n", 10),
		"ru/Псевдонимы.md":        "---\naliases: [aliases]\n---\n# Псевдонимы\n\nДобавьте aliases.\n",
		// The note whose file name is the query as typed, above one
		// the stemmer gives the same name and more of the word.
		"en/Callouts.md":     "# Callouts\n\nUse a callout to stand out.\n",
		"Sandbox/Callout.md": "# Callout\n\n" + strings.Repeat("A callout, callouts, more callouts.\n", 6),
		// Korean words with punctuation between stand together.
		"tech/harness.md":   "# 하네스 엔지니어링\n\n핵심 공식: 모델 + 하네스 = 에이전트\n",
		"wiki/하네스-적용-계획.md": "# 하네스 멀티 에이전트 적용 계획\n\n에이전트 둘. 모델은 나중에 고른다. 하네스 설정, 하네스 점검.\n",
		// No note holds every word: the notes holding the rarest
		// of them (socks) before a heading of a common one (last).
		"wardrobe.md": "# Wardrobe\n\nWool socks from Darn Tough, with a lifetime guarantee.\n",
		"Movies.md":   "# Movies\n\n## Last seen\n\nA film.\n",
		"Shows.md":    "# Shows\n\nThe last episode.\n",
		// A Korean question: its interrogative and its verb are not
		// what it is about.
		"memo/2026-04-19-데이터-정제-작업.md": "# 데이터 정제 작업 완료\n\n중복 행 제거.\n",
		"memo/질문.md": "# 질문 모음\n\n데이터 정제 작업은 어떻게 했나 물었다.\n",
	})
	ix := mustOpen(t, v, Options{NoServe: true})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q    string
		want []string // the hits, in order: "path:line match"
	}{
		// The handbook once, at the part with the most kettles.
		{"kettle", []string{
			"Kettle.md:1 title-phrase",
			"mentions/breakfast.md:1 words", "mentions/shopping.md:1 words", "tea.md:1 words", "handbook.md:29 words",
		}},
		// Only the notes holding both words, the handbook in different
		// parts; not teapot.md or the notes of kettles.
		{"kettle teapot", []string{"tea.md:1 words", "handbook.md:29 words"}},
		// No note holds samovar: the note titled kettle leads the rest.
		{"kettle samovar", []string{
			"Kettle.md:1 title",
			"mentions/breakfast.md:1 words", "mentions/shopping.md:1 words", "tea.md:1 words", "handbook.md:29 words",
		}},
		// The mentions by how much of them is the words (mention2's
		// heading is two of them).
		{"키움 API 가이드", []string{"키움 API 가이드.md:1 title-phrase", "ko/mention2.md:1 together", "ko/mention1.md:1 together"}},
		{"Hermes 시스템 헌법", []string{"Wiki/Hermes-시스템-헌법-20260627.md:1 title-words", "Wiki/작업내역.md:1 together", "index.md:1 together"}},
		{"cost per use", []string{"Clippings/Buy wisely.md:1 together", "Notes/Usage.md:1 together"}},
		{"aliases", []string{"en/Aliases.md:1 title-phrase", "ru/Псевдонимы.md:1 title-phrase"}},
		{"Kevin Kelly", []string{"References/Kevin Kelly.md:1 title-phrase", "mentions/kk.md:1 together"}},
		{"callouts", []string{"en/Callouts.md:1 title-phrase", "Sandbox/Callout.md:1 title-phrase"}},
		{"모델 + 하네스 = 에이전트", []string{"tech/harness.md:1 together", "wiki/하네스-적용-계획.md:1 title"}},
		{"which socks last longest", []string{"wardrobe.md:1 words", "Movies.md:1 heading", "Shows.md:1 words", "handbook.md:29 words"}},
		{"데이터 정제 작업은 어떻게 했나", []string{"memo/2026-04-19-데이터-정제-작업.md:1 title-phrase", "memo/질문.md:1 together"}},
	} {
		res := mustSearch(t, ix, Query{Text: c.q, Limit: 20})
		var got []string
		seen := map[string]bool{}
		for _, h := range rankOrder(res.Hits) { // ties by path
			if seen[h.Path] {
				t.Errorf("%s: %s is more than one hit", c.q, h.Path)
			}
			seen[h.Path] = true
			got = append(got, fmt.Sprintf("%s:%d %s", h.Path, h.Line, h.Match))
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", c.q, got, c.want)
		}
	}
}

// TestTopNotes: the word ranking as notes only, one per path, in order,
// for a fusion with another ranking.
func TestTopNotes(t *testing.T) {
	logText := ""
	for i := range 30 {
		logText += fmt.Sprintf("### 2026-11-02T10:%02d:00Z lyra [ops/incident] Walrus sighting %d\nA walrus walrus walrus on the pier.\n<!-- nexus prev=x sig=y -->\n\n", i, i)
	}
	v := mustVault(t, map[string]string{
		"log/live/2026-11.md": logText,
		"Walrus.md":           "# Walrus\n\nA large marine mammal.\n",
		"zoo.md":              "# Zoo\n\nWe saw a walrus.\n",
		"beach.md":            "# Beach\n\nNo walrus today.\n",
	})
	ix := mustOpen(t, v, Options{NoServe: true})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.TopNotes(context.Background(), Query{Text: "walrus"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.Path)
		if h.Kind != KindNote || h.Line < 1 || h.Title == "" || h.Snippet == "" {
			t.Errorf("hit %+v", h)
		}
	}
	if len(got) != 3 || got[0] != "Walrus.md" {
		t.Fatalf("top notes %q", got)
	}
	if hits, err := ix.TopNotes(context.Background(), Query{Text: "walrus"}, 1); err != nil || len(hits) != 1 || hits[0].Path != "Walrus.md" {
		t.Fatalf("top note %v %v", hits, err)
	}
}

// TestKoreanStemBelowExact: a query word matched by its stem (지역은 as
// 지역) finds the notes holding the stem, below those holding the word
// as typed, in the same tier.
func TestKoreanStemBelowExact(t *testing.T) {
	v := mustVault(t, map[string]string{
		"stem.md":  "# 메모\n\n회의 지역에서 만났다. 지역 일정.\n",
		"exact.md": "# 메모\n\n회의 지역은 서울이다.\n",
		"other.md": "# 메모\n\n지구 반대편.\n",
	})
	ix := mustOpen(t, v, Options{NoServe: true})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := mustSearch(t, ix, Query{Text: "지역은"})
	if got := strings.Join(paths(res), " "); got != "exact.md stem.md" {
		t.Fatalf("hits %s, want exact.md stem.md", got)
	}
	if res.Hits[0].Match != res.Hits[1].Match {
		t.Fatalf("matches %q and %q: want one tier", res.Hits[0].Match, res.Hits[1].Match)
	}
}
