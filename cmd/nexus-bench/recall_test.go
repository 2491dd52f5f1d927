package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// TestScore: the metrics of one ranking, by hand.
func TestScore(t *testing.T) {
	tests := []struct {
		name          string
		ranked, ev    []string
		r5, mrr, hit1 float64
	}{
		{"first", []string{"a", "b"}, []string{"a"}, 1, 1, 1},
		{"third", []string{"x", "y", "a"}, []string{"a"}, 1, 1.0 / 3, 0},
		{"sixth: past the top 5, still in MRR", []string{"1", "2", "3", "4", "5", "a"}, []string{"a"}, 0, 1.0 / 6, 0},
		{"eleventh: past the depth", []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "a"}, []string{"a"}, 0, 0, 0},
		{"missing", []string{"x"}, []string{"a"}, 0, 0, 0},
		{"empty ranking", nil, []string{"a"}, 0, 0, 0},
		{"one of two evidence in the top 5", []string{"x", "b", "3", "4", "5", "a"}, []string{"a", "b"}, 0.5, 0.5, 0},
		{"both evidence", []string{"b", "a"}, []string{"a", "b"}, 1, 1, 1},
		{"a repeated path counts once", []string{"a", "a"}, []string{"a", "b"}, 0.5, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s score
			s.add(tt.ranked, tt.ev)
			s = s.mean()
			if s.N != 1 || !near(s.R5, tt.r5) || !near(s.MRR, tt.mrr) || !near(s.Hit1, tt.hit1) {
				t.Errorf("got %+v, want R@5 %v MRR %v hit@1 %v", s, tt.r5, tt.mrr, tt.hit1)
			}
		})
	}
	var s score
	s.add([]string{"a"}, []string{"a"})
	s.add([]string{"x", "a"}, []string{"a"})
	if m := s.mean(); m.N != 2 || !near(m.R5, 1) || !near(m.MRR, 0.75) || !near(m.Hit1, 0.5) {
		t.Errorf("mean of two: %+v, want R@5 1, MRR 0.75, hit@1 0.5", m)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestFuseAlso: reciprocal-rank fusion of the phrasings' rankings.
func TestFuseAlso(t *testing.T) {
	rankings := map[string][]string{
		"q":  {"a", "b", "c"},
		"q2": {"c", "b"},
		"q3": {"c", "d"},
	}
	rank := func(_ context.Context, text string) ([]string, error) { return rankings[text], nil }
	tests := []struct {
		also []string
		want []string
	}{
		{nil, []string{"a", "b", "c"}},
		// b: 1/62+1/62; a: 1/61; c: 1/63+1/61.
		{[]string{"q2"}, []string{"c", "b", "a"}},
		// c: 1/63+1/61+1/61, b: 2/62, a: 1/61, d: 1/62 — a before d.
		{[]string{"q2", "q3"}, []string{"c", "b", "a", "d"}},
		// A phrasing that finds nothing changes nothing.
		{[]string{"none"}, []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		got, err := fuseAlso(context.Background(), rank, "q", tt.also)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("also %q: %q, %v; want %q", tt.also, got, err, tt.want)
		}
	}
	// Ties go to the earlier phrasing's path.
	rankings["t1"], rankings["t2"] = []string{"x"}, []string{"y"}
	if got, _ := fuseAlso(context.Background(), rank, "t1", []string{"t2"}); !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("tie: %q, want [x y]", got)
	}
}

// tinySet is a data set whose ranks can be worked out by hand: Walrus.md
// is the only note titled walrus, Ice.md mentions the walrus once in its
// body, Kiwi.md alone holds flightless, and nothing holds penguin.
const tinySet = `{
 "name": "tiny",
 "notes": [
  {"path": "a/Walrus.md", "text": "# Walrus\n\nThe walrus lives on sea ice and dives for clams.\n"},
  {"path": "a/Kiwi.md", "text": "# Kiwi\n\nThe kiwi is a flightless bird of New Zealand.\n"},
  {"path": "b/Ice.md", "text": "# Ice\n\nSea ice melts in summer. A walrus rests on it.\n"}
 ],
 "questions": [
  {"id": "q1", "text": "walrus", "lang": "en", "kind": "exact", "evidence": ["a/Walrus.md"]},
  {"id": "q2", "text": "flightless", "lang": "en", "kind": "exact", "evidence": ["a/Kiwi.md"]},
  {"id": "q3", "text": "penguin", "lang": "en", "kind": "paraphrase", "evidence": ["b/Ice.md"], "also": ["melts"]},
  {"id": "q4", "text": "walrus", "lang": "ko", "kind": "other-language", "evidence": ["b/Ice.md"]}
 ]
}`

// TestRecallTiny runs the bench on tinySet and checks every engine's
// metrics against the ranks worked out by hand:
//
//	q1 walrus → Walrus.md first (its title), Ice.md second
//	q2 flightless → Kiwi.md alone
//	q3 penguin → nothing; with also "melts" → Ice.md alone
//	q4 walrus, evidence Ice.md → second
func TestRecallTiny(t *testing.T) {
	d, err := loadDataset([]byte(tinySet))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := runRecall(context.Background(), d, recallOptions{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]score{
		// words: R@5 (1+1+0+1)/4, MRR (1+1+0+1/2)/4, hit@1 2/4.
		engWords: {"all": {4, 0.75, 0.625, 0.5}, "en": {3, 2.0 / 3, 2.0 / 3, 2.0 / 3}, "en paraphrase": {1, 0, 0, 0}, "ko other-language": {1, 1, 0.5, 0}},
		// also finds q3: R@5 4/4, MRR 3.5/4, hit@1 3/4.
		engAlso: {"all": {4, 1, 0.875, 0.75}, "en paraphrase": {1, 1, 1, 1}},
		// One word each: AND and OR rank alike, the title weighted 3.
		engFTSAnd:    {"all": {4, 0.75, 0.625, 0.5}},
		engFTSOr:     {"all": {4, 0.75, 0.625, 0.5}},
		engFTSOrAlso: {"all": {4, 1, 0.875, 0.75}},
	}
	for e, groups := range want {
		for g, w := range groups {
			got := rep.Scores[e][g]
			if got.N != w.N || !near(got.R5, w.R5) || !near(got.MRR, w.MRR) || !near(got.Hit1, w.Hit1) {
				t.Errorf("%s %s: %+v, want %+v", e, g, got, w)
			}
		}
	}
	if !slices.Equal(rep.Groups, []string{"all", "en", "en exact", "en paraphrase", "ko", "ko other-language"}) {
		t.Errorf("groups %q", rep.Groups)
	}
	if !slices.Equal(rep.Misses[engWords], []string{"q3"}) || len(rep.Misses[engAlso]) != 0 {
		t.Errorf("misses %v", rep.Misses)
	}
	if slices.Contains(rep.Engines, engHybrid) || !strings.HasPrefix(rep.Hybrid, "not measured") {
		t.Errorf("hybrid without a provider: engines %q, %q", rep.Engines, rep.Hybrid)
	}
}

// TestRecallTurns: a conversation's turns are notes under turns/, and
// evidence names turn ids.
func TestRecallTurns(t *testing.T) {
	d, err := loadDataset([]byte(`{"name": "chat",
	 "turns": [
	  {"id": "t1", "speaker": "user", "time": "2026-01-02T10:00:00Z", "text": "We moved the staging server to Frankfurt."},
	  {"id": "t2", "speaker": "assistant", "text": "Noted: the kiwi is a flightless bird."}
	 ],
	 "questions": [{"id": "q", "text": "where is staging", "lang": "en", "kind": "exact", "evidence": ["t1"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	files := d.files()
	if got := files["turns/t1.md"]; !strings.Contains(got, "speaker: \"user\"\ndate: 2026-01-02T10:00:00Z\n---\nWe moved") {
		t.Errorf("turn note:\n%s", got)
	}
	rep, err := runRecall(context.Background(), d, recallOptions{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Scores[engWords]["all"]; s.Hit1 != 1 {
		t.Errorf("staging turn not first: %+v", s)
	}
}

// TestRecallMain: the command reads -data, prints the tables, and says
// hybrid is not available when the nexus build's search offers no
// --also (as on main today), rather than printing a number.
func TestRecallMain(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "tiny.json")
	if err := os.WriteFile(data, []byte(tinySet), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(dir, "nexus")
	script := "#!/bin/sh\necho 'Usage: nexus search WORDS [flags]'\necho '  deploy -docker  must not contain docker (also -\"a phrase\")'\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		code int
		out  string // in stdout, or in stderr when code != 0
	}{
		{[]string{"-data", data}, 0, "hybrid: not measured: no embedding provider"},
		{[]string{"-data", data, "-embed-url", "http://127.0.0.1:1/v1", "-embed-model", "m"}, 0, "hybrid: not available in this build: hybrid search runs through 'nexus search'; give --nexus"},
		{[]string{"-data", data, "-embed-static", dir, "-nexus", fake}, 0, "hybrid: not available in this build ('nexus search --help' offers no --also"},
		{[]string{"-data", data, "-embed-url", "http://127.0.0.1:1/v1"}, 1, "--embed-url needs --embed-model"},
		{[]string{"-data", filepath.Join(dir, "missing.json")}, 1, "missing.json"},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := recallMain(tt.args, &stdout, &stderr)
		got := stdout.String()
		if tt.code != 0 {
			got = stderr.String()
		}
		if code != tt.code || !strings.Contains(got, tt.out) {
			t.Errorf("%q: exit %d, want %d; output:\n%s%s", tt.args, code, tt.code, stdout.String(), stderr.String())
		}
		if code == 0 && !strings.Contains(got, "| en exact | 2 | 1.00 | 1.00 |") {
			t.Errorf("%q: no table row for en exact:\n%s", tt.args, got)
		}
	}
}

func TestOffersHybrid(t *testing.T) {
	for help, want := range map[string]bool{
		"--also strings   another phrasing\nranks by words and meaning": true,
		"--also strings   another phrasing (embeddings)":                true,
		"--also strings   another phrasing":                             false,
		"ranks by meaning":                                              false,
		"deploy -docker  (also -\"a phrase\")":                          false,
	} {
		if got := offersHybrid(help); got != want {
			t.Errorf("offersHybrid(%q) = %v", help, got)
		}
	}
}

// TestLoadDataset: what the loader refuses, and why.
func TestLoadDataset(t *testing.T) {
	const qs = `"questions": [{"id": "q", "text": "t", "lang": "en", "kind": "exact", "evidence": ["a.md"]}]`
	tests := []struct {
		name, data, err string
	}{
		{"valid", `{"name": "n", "notes": [{"path": "a.md", "text": "x"}], ` + qs + `}`, ""},
		{"valid turns", `{"name": "n", "turns": [{"id": "a.md", "speaker": "u", "text": "x"}], ` + qs + `}`, ""},
		{"unknown field", `{"name": "n", "nots": [], ` + qs + `}`, "unknown field"},
		{"trailing data", `{"name": "n", "notes": [{"path": "a.md", "text": "x"}], ` + qs + `} {}`, "after the JSON"},
		{"no name", `{"notes": [{"path": "a.md", "text": "x"}], ` + qs + `}`, "name is empty"},
		{"neither", `{"name": "n", ` + qs + `}`, "exactly one"},
		{"both", `{"name": "n", "notes": [{"path": "a.md", "text": "x"}], "turns": [{"id": "t", "text": "x"}], ` + qs + `}`, "exactly one"},
		{"parent", `{"name": "n", "notes": [{"path": "../a.md", "text": "x"}], ` + qs + `}`, "not a clean path"},
		{"absolute", `{"name": "n", "notes": [{"path": "/a.md", "text": "x"}], ` + qs + `}`, "not a clean path"},
		{"unclean", `{"name": "n", "notes": [{"path": "x/../a.md", "text": "x"}], ` + qs + `}`, "not a clean path"},
		{"hidden", `{"name": "n", "notes": [{"path": ".nexus/a.md", "text": "x"}], ` + qs + `}`, "hidden"},
		{"backslash", `{"name": "n", "notes": [{"path": "x\\a.md", "text": "x"}], ` + qs + `}`, "character"},
		{"not markdown", `{"name": "n", "notes": [{"path": "a.txt", "text": "x"}], ` + qs + `}`, "not a .md"},
		{"log", `{"name": "n", "notes": [{"path": "log/a.md", "text": "x"}], ` + qs + `}`, "reserved"},
		{"case duplicate", `{"name": "n", "notes": [{"path": "a.md", "text": "x"}, {"path": "A.md", "text": "y"}], ` + qs + `}`, "repeats"},
		{"turn id", `{"name": "n", "turns": [{"id": "a/b", "text": "x"}], ` + qs + `}`, "id \"a/b\""},
		{"turn empty", `{"name": "n", "turns": [{"id": "a.md", "text": " "}], ` + qs + `}`, "text is empty"},
		{"no questions", `{"name": "n", "notes": [{"path": "a.md", "text": "x"}], "questions": []}`, "no questions"},
		{"unknown evidence", `{"name": "n", "notes": [{"path": "b.md", "text": "x"}], ` + qs + `}`, "evidence \"a.md\""},
		{"bad lang", `{"name": "n", "notes": [{"path": "a.md", "text": "x"}], "questions": [{"id": "q", "text": "t", "lang": "English", "kind": "exact", "evidence": ["a.md"]}]}`, "language code"},
		{"bad kind", `{"name": "n", "notes": [{"path": "a.md", "text": "x"}], "questions": [{"id": "q", "text": "t", "lang": "en", "kind": "fuzzy", "evidence": ["a.md"]}]}`, "kind \"fuzzy\""},
		{"no evidence", `{"name": "n", "notes": [{"path": "a.md", "text": "x"}], "questions": [{"id": "q", "text": "t", "lang": "en", "kind": "exact", "evidence": []}]}`, "evidence"},
		{"empty also", `{"name": "n", "notes": [{"path": "a.md", "text": "x"}], "questions": [{"id": "q", "text": "t", "lang": "en", "kind": "exact", "evidence": ["a.md"], "also": [""]}]}`, "also phrasing is empty"},
		{"repeated id", `{"name": "n", "notes": [{"path": "a.md", "text": "x"}], "questions": [{"id": "q", "text": "t", "lang": "en", "kind": "exact", "evidence": ["a.md"]}, {"id": "q", "text": "t", "lang": "en", "kind": "exact", "evidence": ["a.md"]}]}`, "repeated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadDataset([]byte(tt.data))
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("error %v, want one saying %q", err, tt.err)
			}
		})
	}
}

// FuzzLoadDataset: whatever the loader accepts writes only clean paths
// inside the vault, every question's evidence is one of them, and it
// survives a round trip.
func FuzzLoadDataset(f *testing.F) {
	f.Add([]byte(tinySet))
	f.Add([]byte(`{"name": "c", "turns": [{"id": "t1", "speaker": "u", "text": "x"}], "questions": [{"id": "q", "text": "x", "lang": "ko", "kind": "paraphrase", "evidence": ["t1"], "also": ["y"]}]}`))
	f.Add([]byte(`{"name": "n", "notes": [{"path": "a/../b.md", "text": "x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := loadDataset(data)
		if err != nil {
			return
		}
		files := d.files()
		for p := range files {
			if strings.HasPrefix(p, "turns/") {
				if !idRe.MatchString(strings.TrimSuffix(strings.TrimPrefix(p, "turns/"), ".md")) {
					t.Fatalf("turn path %q", p)
				}
			} else if err := checkNotePath(p); err != nil {
				t.Fatalf("accepted %v", err)
			}
			if filepath.IsAbs(p) || slices.Contains(strings.Split(p, "/"), "..") {
				t.Fatalf("path leaves the vault: %q", p)
			}
		}
		for _, q := range d.Questions {
			for _, e := range d.evidencePaths(q) {
				if _, ok := files[e]; !ok {
					t.Fatalf("evidence %q is no file", e)
				}
			}
		}
		again, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := loadDataset(again); err != nil {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// TestGeneratedDataSet: the committed data set is the generator's output
// (run 'nexus-bench recall -generate testdata/recall.json' after editing
// the tables), small, and its paraphrases share at most one word of four
// letters or more with their note.
func TestGeneratedDataSet(t *testing.T) {
	d := generateRecall(1, recallFillers)
	data, err := encodeDataset(d)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, recallData) {
		t.Fatal("testdata/recall.json is not the generator's output: run 'go run . recall -generate testdata/recall.json'")
	}
	if again, _ := encodeDataset(generateRecall(1, recallFillers)); !bytes.Equal(again, data) {
		t.Fatal("the generator is not deterministic")
	}
	if _, err := loadDataset(data); err != nil {
		t.Fatal(err)
	}
	if len(data) > 1<<20 || len(d.Notes) < 150 || len(d.Questions) < 100 {
		t.Errorf("%d bytes, %d notes, %d questions", len(data), len(d.Notes), len(d.Questions))
	}
	text := map[string]string{}
	for _, n := range d.Notes {
		text[n.Path] = strings.ToLower(n.Text)
	}
	kinds := map[string]int{}
	for _, q := range d.Questions {
		kinds[q.Lang+" "+q.Kind]++
		if q.Kind != kindParaphrase {
			continue
		}
		var shared []string
		for _, w := range strings.FieldsFunc(strings.ToLower(q.Text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if len([]rune(w)) >= 4 && strings.Contains(text[q.Evidence[0]], w) && !slices.Contains(shared, w) {
				shared = append(shared, w)
			}
		}
		if len(shared) > 1 {
			t.Errorf("%s %q shares %q with its note", q.ID, q.Text, shared)
		}
	}
	for _, k := range []string{"en exact", "en paraphrase", "en other-language", "ko exact", "ko paraphrase", "ko other-language"} {
		if kinds[k] < 15 {
			t.Errorf("%d questions of %s", kinds[k], k)
		}
	}
}

// TestRecallHybridCLI: with a build whose search offers --also and
// meaning (a fake nexus here), the bench configures the provider in the
// vault, embeds it, and ranks each question by 'nexus search --json'
// with its phrasings.
func TestRecallHybridCLI(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake nexus is a shell script")
	}
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	fake := filepath.Join(dir, "nexus")
	script := `#!/bin/sh
echo "$@" >> '` + calls + `'
case "$*" in
*"search --help"*) echo "  --also strings   another phrasing of the question, ranked by words and meaning" ;;
*"index embed"*) exit 0 ;;
*) echo '{"query": "x", "hits": [{"path": "b/Ice.md"}, {"path": "b/Ice.md"}, {"path": "a/Walrus.md"}]}' ;;
esac
`
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := loadDataset([]byte(tinySet))
	if err != nil {
		t.Fatal(err)
	}
	o := recallOptions{nexusBin: fake, embedURL: "http://127.0.0.1:1/v1", embedModel: "m", keep: true}
	rep, err := runRecall(context.Background(), d, o, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rep.Vault) })
	if rep.Hybrid != "measured" || !slices.Contains(rep.Engines, engHybrid) {
		t.Fatalf("hybrid %q, engines %q", rep.Hybrid, rep.Engines)
	}
	// Every question gets Ice.md then Walrus.md: q1 second, q2 never,
	// q3 and q4 first.
	if got, want := rep.Scores[engHybrid]["all"], (score{4, 0.75, 0.625, 0.5}); got != want {
		t.Errorf("hybrid: %+v, want %+v", got, want)
	}
	cfg, err := os.ReadFile(filepath.Join(rep.Vault, ".nexus", "config.yaml"))
	if err != nil || !strings.Contains(string(cfg), "search:\n  embeddings:\n    provider: openai\n    url: \"http://127.0.0.1:1/v1\"\n    model: \"m\"\n") {
		t.Errorf("config.yaml (%v):\n%s", err, cfg)
	}
	log, _ := os.ReadFile(calls)
	for _, want := range []string{"search --help\n", "--vault " + rep.Vault + " index embed\n", "--json search --limit 10 --also melts -- penguin\n", "--json search --limit 10 -- flightless\n"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("no call %q in:\n%s", want, log)
		}
	}
}
