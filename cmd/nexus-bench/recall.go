package main

import (
	"context"
	"database/sql"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/vault"
)

// recallData is the committed English + Korean data set, made by
// 'nexus-bench recall -generate' (recallgen.go).
//
//go:embed testdata/recall.json
var recallData []byte

// recallDepth is how deep each ranking is read: MRR counts a first
// evidence found at rank 1..recallDepth.
const recallDepth = 10

// rrfK is the constant of reciprocal-rank fusion (1/(k+rank)).
const rrfK = 60

type recallOptions struct {
	data        string
	generate    string
	seed        uint64
	keep        bool
	nexusBin    string
	embedURL    string
	embedModel  string
	embedStatic string
	jsonOut     bool
}

// recallMain is 'nexus-bench recall'.
func recallMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("nexus-bench recall", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o recallOptions
	fs.StringVar(&o.data, "data", "", "a recall data set (JSON, docs/recall.md); default: the committed English + Korean one")
	fs.StringVar(&o.generate, "generate", "", "only write the generated English + Korean data set to this file and exit")
	fs.Uint64Var(&o.seed, "seed", 1, "with -generate: the generator's seed")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary vault (its path is printed)")
	fs.StringVar(&o.nexusBin, "nexus", "", "a built nexus binary, for hybrid search (words + meaning) through 'nexus search'")
	fs.StringVar(&o.embedURL, "embed-url", "", "hybrid: an OpenAI-compatible embeddings endpoint, up to /v1 (e.g. http://127.0.0.1:11434/v1)")
	fs.StringVar(&o.embedModel, "embed-model", "", "hybrid: the model the endpoint is asked for")
	fs.StringVar(&o.embedStatic, "embed-static", "", "hybrid: a local model2vec model folder")
	fs.BoolVar(&o.jsonOut, "json", false, "print the report as JSON")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `usage: nexus-bench recall [flags]

Writes a recall data set's vault to a temporary folder, indexes it with
Nexus and SQLite FTS5, asks every question, and prints R@5, MRR (first
evidence within the top %d) and hit@1 per language and question kind for:
Nexus words only, words + the question's 'also' phrasings, hybrid (words +
meaning, when a nexus build offers it and an embedding provider is given),
and FTS5 bm25 with AND and OR queries. The data format is docs/recall.md.

`, recallDepth)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "nexus-bench recall: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if o.generate != "" {
		if err := writeGenerated(o.generate, o.seed); err != nil {
			fmt.Fprintln(stderr, "nexus-bench recall:", err)
			return 1
		}
		return 0
	}
	data := recallData
	if o.data != "" {
		var err error
		if data, err = os.ReadFile(o.data); err != nil {
			fmt.Fprintln(stderr, "nexus-bench recall:", err)
			return 1
		}
	}
	d, err := loadDataset(data)
	if err != nil {
		fmt.Fprintln(stderr, "nexus-bench recall:", err)
		return 1
	}
	rep, err := runRecall(context.Background(), d, o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "nexus-bench recall:", err)
		return 1
	}
	return printReport(stdout, rep, o.jsonOut)
}

// ranker returns the vault paths best first for one question (at most
// recallDepth).
type ranker func(ctx context.Context, q question) ([]string, error)

// score sums one engine's metrics over a group of questions.
type score struct {
	N    int     `json:"questions"`
	R5   float64 `json:"r_at_5"`
	MRR  float64 `json:"mrr"`
	Hit1 float64 `json:"hit_at_1"`
}

// add scores one ranking against its evidence: the share of the evidence
// in the top 5, 1/rank of the first evidence in the top recallDepth, and
// whether rank 1 is evidence.
func (s *score) add(ranked, evidence []string) {
	want := map[string]bool{}
	for _, e := range evidence {
		want[e] = true
	}
	s.N++
	in5, first := 0, 0
	for i, p := range ranked[:min(len(ranked), recallDepth)] {
		if !want[p] {
			continue
		}
		if i < 5 {
			in5++
		}
		if first == 0 {
			first = i + 1
		}
		delete(want, p) // a path counted once
	}
	s.R5 += float64(in5) / float64(len(evidence))
	if first > 0 {
		s.MRR += 1 / float64(first)
	}
	if first == 1 {
		s.Hit1++
	}
}

// mean turns the sums into averages.
func (s score) mean() score {
	if s.N == 0 {
		return s
	}
	n := float64(s.N)
	return score{N: s.N, R5: s.R5 / n, MRR: s.MRR / n, Hit1: s.Hit1 / n}
}

type recallReport struct {
	Data      string   `json:"data"`
	Files     int      `json:"files"`
	Questions int      `json:"questions"`
	Engines   []string `json:"engines"`
	Groups    []string `json:"groups"`
	// Scores[engine][group], averaged.
	Scores map[string]map[string]score `json:"scores"`
	Hybrid string                      `json:"hybrid"` // why hybrid is absent, or "measured"
	Vault  string                      `json:"vault,omitempty"`
	Misses map[string][]string         `json:"misses,omitempty"` // engine → question ids with no evidence in the top recallDepth
}

// Engine names, in the table's column order.
const (
	engWords     = "nexus words"
	engAlso      = "nexus words+also"
	engHybrid    = "nexus hybrid"
	engFTSAnd    = "fts5 AND"
	engFTSOr     = "fts5 OR"
	engFTSOrAlso = "fts5 OR+also"
)

func runRecall(ctx context.Context, d *dataset, o recallOptions, log io.Writer) (*recallReport, error) {
	dir, err := os.MkdirTemp("", "nexus-recall-")
	if err != nil {
		return nil, err
	}
	if o.keep {
		fmt.Fprintln(log, "vault kept in", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	files := d.files()
	if err := writeVault(dir, files); err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	ix, db, closeBoth, err := indexBoth(ctx, dir, paths)
	if err != nil {
		return nil, err
	}
	defer closeBoth()

	words := func(ctx context.Context, text string) ([]string, error) {
		hits, err := ix.TopNotes(ctx, index.Query{Text: text, NoSnippets: true}, recallDepth)
		if err != nil {
			return nil, err
		}
		out := make([]string, len(hits))
		for i, h := range hits {
			out[i] = h.Path
		}
		return out, nil
	}
	ftsAnd := func(ctx context.Context, text string) ([]string, error) { return ftsRank(ctx, db, text, " ") }
	ftsOr := func(ctx context.Context, text string) ([]string, error) { return ftsRank(ctx, db, text, " OR ") }
	engines := []string{engWords, engAlso}
	rankers := map[string]ranker{
		engWords: func(ctx context.Context, q question) ([]string, error) { return words(ctx, q.Text) },
		// The bench's own fusion of the phrasings; with 'nexus search
		// --also' on main this becomes a call to the CLI's ranking.
		engAlso:      func(ctx context.Context, q question) ([]string, error) { return fuseAlso(ctx, words, q.Text, q.Also) },
		engFTSAnd:    func(ctx context.Context, q question) ([]string, error) { return ftsAnd(ctx, q.Text) },
		engFTSOr:     func(ctx context.Context, q question) ([]string, error) { return ftsOr(ctx, q.Text) },
		engFTSOrAlso: func(ctx context.Context, q question) ([]string, error) { return fuseAlso(ctx, ftsOr, q.Text, q.Also) },
	}
	rep := &recallReport{Data: d.Name, Files: len(files), Questions: len(d.Questions), Scores: map[string]map[string]score{}, Misses: map[string][]string{}}
	hybrid, why, err := hybridRanker(ctx, o, dir, log)
	if err != nil {
		return nil, err
	}
	rep.Hybrid = why
	if hybrid != nil {
		engines = append(engines, engHybrid)
		rankers[engHybrid] = hybrid
	}
	engines = append(engines, engFTSAnd, engFTSOr, engFTSOrAlso)
	rep.Engines = engines
	if o.keep {
		rep.Vault = dir
	}

	sums := sumTable[score]{}
	groupSet := map[string]bool{}
	for _, q := range d.Questions {
		evidence := d.evidencePaths(q)
		groups := []string{"all", q.Lang, q.Lang + " " + q.Kind}
		for _, g := range groups {
			groupSet[g] = true
		}
		for _, e := range engines {
			ranked, err := rankers[e](ctx, q)
			if err != nil {
				return nil, fmt.Errorf("%s: question %s: %w", e, q.ID, err)
			}
			for _, g := range groups {
				sums.at(e, g).add(ranked, evidence)
			}
			var one score
			if one.add(ranked, evidence); one.MRR == 0 {
				rep.Misses[e] = append(rep.Misses[e], q.ID)
			}
		}
	}
	rep.Scores, rep.Groups = means(sums, groupSet)
	sort.Slice(rep.Groups, func(i, j int) bool { return groupLess(rep.Groups[i], rep.Groups[j]) })
	return rep, nil
}

// groupLess orders "all" first, then each language followed by its
// kinds (exact, paraphrase, other-language).
func groupLess(a, b string) bool {
	if a == "all" || b == "all" {
		return a == "all" && b != "all"
	}
	la, ka, _ := strings.Cut(a, " ")
	lb, kb, _ := strings.Cut(b, " ")
	if la != lb {
		return la < lb
	}
	order := map[string]int{"": 0, kindExact: 1, kindParaphrase: 2, kindOtherLang: 3}
	return order[ka] < order[kb]
}

// fuseAlso ranks the question and each of its alternative phrasings and
// fuses the rankings by reciprocal rank (1/(60+rank), summed per path);
// ties go to the path ranked better by an earlier phrasing.
func fuseAlso(ctx context.Context, rank func(context.Context, string) ([]string, error), text string, also []string) ([]string, error) {
	if len(also) == 0 {
		return rank(ctx, text)
	}
	type fused struct {
		score float64
		first int // order of first appearance, phrasing by phrasing
	}
	byPath := map[string]*fused{}
	order := 0
	for _, t := range append([]string{text}, also...) {
		ranked, err := rank(ctx, t)
		if err != nil {
			return nil, err
		}
		for i, p := range ranked {
			f := byPath[p]
			if f == nil {
				f = &fused{first: order}
				byPath[p] = f
				order++
			}
			f.score += 1 / float64(rrfK+i+1)
		}
	}
	out := make([]string, 0, len(byPath))
	for p := range byPath {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := byPath[out[i]], byPath[out[j]]
		if a.score != b.score {
			return a.score > b.score
		}
		return a.first < b.first
	})
	return out[:min(len(out), recallDepth)], nil
}

// ftsRank asks FTS5 for the question's words (letters and digits; the
// unicode61 tokenizer's own split), joined by sep: " " for AND, " OR "
// for OR, ranked by bm25 with the title weighted 3.
func ftsRank(ctx context.Context, db *sql.DB, text, sep string) ([]string, error) {
	var terms []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		terms = append(terms, `"`+w+`"`)
	}
	if len(terms) == 0 {
		return nil, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT path FROM notes WHERE notes MATCH ? ORDER BY bm25(notes, 0, 3, 1) LIMIT ?`, strings.Join(terms, sep), recallDepth)
	if err != nil {
		return nil, err
	}
	return scanPaths(rows)
}

// writeVault makes a Nexus vault in dir holding files.
func writeVault(dir string, files map[string]string) error {
	if _, _, err := vault.Init(dir); err != nil {
		return fmt.Errorf("init vault: %w", err)
	}
	for p, text := range files {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(abs, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// hybridRanker returns a ranking by words and meaning through the nexus
// binary's own search, or nil and why not. It never makes a number up: a
// build whose 'nexus search --help' offers no --also and no meaning
// ranking is reported as such.
func hybridRanker(ctx context.Context, o recallOptions, dir string, log io.Writer) (ranker, string, error) {
	provider := o.embedURL != "" || o.embedModel != "" || o.embedStatic != ""
	if !provider {
		return nil, "not measured: no embedding provider (--embed-url and --embed-model, or --embed-static)", nil
	}
	if o.embedStatic == "" && (o.embedURL == "" || o.embedModel == "") {
		return nil, "", errors.New("--embed-url needs --embed-model (or give --embed-static)")
	}
	if o.nexusBin == "" {
		return nil, "not available in this build: hybrid search runs through 'nexus search'; give --nexus", nil
	}
	help, err := exec.CommandContext(ctx, o.nexusBin, "search", "--help").CombinedOutput()
	if err != nil {
		return nil, "", fmt.Errorf("%s search --help: %w", o.nexusBin, err)
	}
	if !offersHybrid(string(help)) {
		return nil, "not available in this build ('nexus search --help' offers no --also and no ranking by meaning)", nil
	}
	var cfg strings.Builder
	cfg.WriteString("\nsearch:\n  embeddings:\n")
	if o.embedStatic != "" {
		abs, err := filepath.Abs(o.embedStatic)
		if err != nil {
			return nil, "", err
		}
		fmt.Fprintf(&cfg, "    provider: static\n    path: %s\n", yamlString(abs))
	} else {
		fmt.Fprintf(&cfg, "    provider: openai\n    url: %s\n    model: %s\n", yamlString(o.embedURL), yamlString(o.embedModel))
	}
	f, err := os.OpenFile(filepath.Join(dir, ".nexus", "config.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, "", err
	}
	_, err = f.WriteString(cfg.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, "", fmt.Errorf("write the embeddings config: %w", err)
	}
	nexus := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, o.nexusBin, append([]string{"--vault", dir}, args...)...)
		cmd.Env = append(os.Environ(), "NEXUS_SEARCH_HOLD=0")
		cmd.Stderr = log
		return cmd.Output()
	}
	fmt.Fprintln(log, "embedding the vault with 'nexus index embed'…")
	start := time.Now()
	if _, err := nexus("index", "embed"); err != nil {
		return nil, "", fmt.Errorf("nexus index embed: %w", err)
	}
	fmt.Fprintf(log, "embedded in %.1fs\n", time.Since(start).Seconds())
	return func(ctx context.Context, q question) ([]string, error) {
		args := []string{"--json", "search", "--limit", fmt.Sprint(recallDepth)}
		for _, a := range q.Also {
			args = append(args, "--also", a)
		}
		out, err := nexus(append(args, "--", q.Text)...)
		if err != nil {
			return nil, fmt.Errorf("nexus search: %w", err)
		}
		var res struct {
			Hits []struct {
				Path string `json:"path"`
			} `json:"hits"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return nil, fmt.Errorf("nexus search --json: %w", err)
		}
		var paths []string
		seen := map[string]bool{}
		for _, h := range res.Hits {
			if !seen[h.Path] {
				seen[h.Path] = true
				paths = append(paths, h.Path)
			}
		}
		return paths, nil
	}, "measured", nil
}

// offersHybrid reads 'nexus search --help': a build with hybrid search
// takes --also and says it ranks by meaning.
func offersHybrid(help string) bool {
	lower := strings.ToLower(help)
	return strings.Contains(help, "--also") && (strings.Contains(lower, "meaning") || strings.Contains(lower, "embedding"))
}

func (r *recallReport) print(w io.Writer) {
	fmt.Fprintf(w, "data set: %s — %d files, %d questions (GOMAXPROCS=%d)\n", r.Data, r.Files, r.Questions, runtime.GOMAXPROCS(0))
	fmt.Fprintf(w, "ranking depth %d; R@5 = share of the evidence in the top 5, MRR = 1/rank of the first evidence (0 past %d), hit@1 = evidence first\n", recallDepth, recallDepth)
	fmt.Fprintf(w, "hybrid: %s\n", r.Hybrid)
	metrics := []struct {
		name string
		get  func(score) float64
	}{
		{"R@5", func(s score) float64 { return s.R5 }},
		{"MRR", func(s score) float64 { return s.MRR }},
		{"hit@1", func(s score) float64 { return s.Hit1 }},
	}
	for _, m := range metrics {
		fmt.Fprintf(w, "\n%s\n\n| questions | n |", m.name)
		for _, e := range r.Engines {
			fmt.Fprintf(w, " %s |", e)
		}
		fmt.Fprint(w, "\n|---|---|")
		for range r.Engines {
			fmt.Fprint(w, "---|")
		}
		fmt.Fprintln(w)
		for _, g := range r.Groups {
			fmt.Fprintf(w, "| %s | %d |", g, r.Scores[r.Engines[0]][g].N)
			for _, e := range r.Engines {
				fmt.Fprintf(w, " %.2f |", m.get(r.Scores[e][g]))
			}
			fmt.Fprintln(w)
		}
	}
}

// indexBoth indexes the notes (paths, slash-separated) of the vault in
// dir twice, for a bench that asks both engines the same questions: a
// full Nexus rebuild, and an in-memory SQLite FTS5 table (see ftsFill).
// closeBoth closes both.
func indexBoth(ctx context.Context, dir string, paths []string) (ix *index.Index, db *sql.DB, closeBoth func(), err error) {
	v, err := vault.Open(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	if ix, err = index.Open(v, index.Options{NoServe: true}); err != nil {
		return nil, nil, nil, err
	}
	if err := ix.Rebuild(ctx, nil); err != nil {
		ix.Close()
		return nil, nil, nil, fmt.Errorf("index the vault: %w", err)
	}
	if db, err = sql.Open("sqlite", ":memory:"); err != nil {
		ix.Close()
		return nil, nil, nil, err
	}
	db.SetMaxOpenConns(1) // one connection: one in-memory database
	if err := ftsFill(db, dir, paths); err != nil {
		db.Close()
		ix.Close()
		return nil, nil, nil, fmt.Errorf("fill fts5: %w", err)
	}
	return ix, db, func() { db.Close(); ix.Close() }, nil
}

// parseFlags parses args into fs; when that fails, the exit code: 0 for
// -h (the usage was printed), 2 for a bad flag.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	return 0, true
}

// sumTable holds the sums of a bench's scores: engine → group → sum.
type sumTable[S any] map[string]map[string]*S

// at is the sum of engine e over group g, made on first use.
func (t sumTable[S]) at(e, g string) *S {
	if t[e] == nil {
		t[e] = map[string]*S{}
	}
	if t[e][g] == nil {
		t[e][g] = new(S)
	}
	return t[e][g]
}

// means averages every sum of t, and lists the groups (in no order).
func means[S any, P interface {
	*S
	mean() S
}](t map[string]map[string]P, groupSet map[string]bool) (map[string]map[string]S, []string) {
	out := map[string]map[string]S{}
	for e, byGroup := range t {
		out[e] = map[string]S{}
		for g, s := range byGroup {
			out[e][g] = s.mean()
		}
	}
	groups := make([]string, 0, len(groupSet))
	for g := range groupSet {
		groups = append(groups, g)
	}
	return out, groups
}

// printReport prints a bench's report as a table, or as JSON.
func printReport(w io.Writer, rep interface{ print(io.Writer) }, asJSON bool) int {
	if !asJSON {
		rep.print(w)
		return 0
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return 1
	}
	return 0
}
