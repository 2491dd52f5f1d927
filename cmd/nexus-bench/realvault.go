package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/vault"
)

// A realvault query file (testdata/realvaults/NAME.json): questions
// written by reading the notes of one public vault, at one commit.
type realQueries struct {
	Name        string      `json:"name"`   // the local copy is VAULTS/NAME
	Repo        string      `json:"repo"`   // owner/name on GitHub
	Commit      string      `json:"commit"` // the commit the questions were written against
	Lang        string      `json:"lang"`   // the vault's main language
	Description string      `json:"description,omitempty"`
	Questions   []realQuery `json:"questions"`
}

// realQuery is one question and the notes that answer it.
type realQuery struct {
	ID       string   `json:"id"`
	Text     string   `json:"text"`
	Kind     string   `json:"kind"` // name, phrase, question, particle
	Evidence []string `json:"evidence"`
}

// realScore sums one engine's metrics over a group of questions.
type realScore struct {
	N    int     `json:"questions"`
	Hit1 float64 `json:"hit_at_1"`
	Hit5 float64 `json:"hit_at_5"`
	MRR  float64 `json:"mrr"`
}

// add scores one ranking: hit@1 and hit@5 (an evidence note at rank 1,
// in the top 5), and 1/rank of the first evidence within recallDepth.
func (s *realScore) add(ranked, evidence []string) int {
	rank := firstRank(ranked, evidence)
	s.N++
	if rank == 1 {
		s.Hit1++
	}
	if rank >= 1 && rank <= 5 {
		s.Hit5++
	}
	if rank >= 1 {
		s.MRR += 1 / float64(rank)
	}
	return rank
}

func (s realScore) mean() realScore {
	if s.N == 0 {
		return s
	}
	n := float64(s.N)
	return realScore{N: s.N, Hit1: s.Hit1 / n, Hit5: s.Hit5 / n, MRR: s.MRR / n}
}

// firstRank is the rank (1-based) of the first evidence path in the top
// recallDepth of ranked, 0 for none. Paths compare without case, as a
// vault on macOS or Windows would.
func firstRank(ranked, evidence []string) int {
	for i, p := range ranked[:min(len(ranked), recallDepth)] {
		for _, e := range evidence {
			if strings.EqualFold(p, e) {
				return i + 1
			}
		}
	}
	return 0
}

// Engines of the real-vault bench.
const (
	rvNexus  = "nexus words"
	rvFTSAnd = "fts5 AND"
	rvFTSOr  = "fts5 OR"
	rvFTS    = "fts5 AND→OR" // AND, and OR when AND finds nothing
)

var rvEngines = []string{rvNexus, rvFTS, rvFTSAnd, rvFTSOr}

type realReport struct {
	Date    string                          `json:"date"`
	Vaults  []realVaultInfo                 `json:"vaults"`
	Groups  []string                        `json:"groups"`
	Scores  map[string]map[string]realScore `json:"scores"`   // engine → group → means
	OneFile map[string]int                  `json:"one_file"` // group → queries whose nexus top 5 is one file while other files match
	Misses  []realMiss                      `json:"misses"`   // questions nexus ranks past 1
}

type realVaultInfo struct {
	Name      string  `json:"name"`
	Repo      string  `json:"repo"`
	Commit    string  `json:"commit"`
	Notes     int     `json:"notes"`
	Questions int     `json:"questions"`
	IndexSecs float64 `json:"index_seconds"` // Nexus's rebuild and the FTS5 fill
}

type realMiss struct {
	ID    string   `json:"id"`
	Text  string   `json:"text"`
	Want  []string `json:"want"`
	Nexus int      `json:"nexus_rank"` // 0: not in the top recallDepth
	FTS   int      `json:"fts_rank"`
	Top   []string `json:"nexus_top3"`
}

// realvaultMain is 'nexus-bench realvault'.
func realvaultMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("nexus-bench realvault", flag.ContinueOnError)
	fs.SetOutput(stderr)
	vaults := fs.String("vaults", "", "the folder holding each vault's local copy, as NAME (see testdata/realvaults/fetch.sh)")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	only := fs.String("only", "", "only the query files whose name is this (comma-separated)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `usage: nexus-bench realvault -vaults DIR [QUERIES.json ...]

Measures recall by words on real Obsidian vaults: each query file names a
public vault (repository and commit) and questions written by reading its
notes. The vault's notes (.md, .canvas, .obsidian/*.json) are copied to a
temporary folder, which Nexus and SQLite FTS5 (bm25, title = file name,
weight 3) both index; every question is asked of both in one run. Prints
hit@1, hit@5 and MRR (first evidence within the top %d) per vault, for the
Korean vaults and overall, and how many queries had a Nexus top 5 of one
file while other files matched. Without query files, the committed ones
(testdata/realvaults/*.json) are used.

`, recallDepth)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *vaults == "" {
		fmt.Fprintln(stderr, "nexus-bench realvault: give -vaults (the folder of the local copies)")
		return 2
	}
	files := fs.Args()
	if len(files) == 0 {
		var err error
		if files, err = filepath.Glob(filepath.Join("testdata", "realvaults", "*.json")); err != nil || len(files) == 0 {
			fmt.Fprintln(stderr, "nexus-bench realvault: no query files given and none in testdata/realvaults (run from cmd/nexus-bench)")
			return 2
		}
	}
	var sets []*realQueries
	for _, f := range files {
		q, err := loadRealQueries(f)
		if err != nil {
			fmt.Fprintln(stderr, "nexus-bench realvault:", err)
			return 1
		}
		if *only != "" && !strings.Contains(","+*only+",", ","+q.Name+",") {
			continue
		}
		sets = append(sets, q)
	}
	rep, err := runRealVaults(context.Background(), *vaults, sets, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "nexus-bench realvault:", err)
		return 1
	}
	return printReport(stdout, rep, *jsonOut)
}

// loadRealQueries reads and checks one query file.
func loadRealQueries(file string) (*realQueries, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var q realQueries
	if err := dec.Decode(&q); err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if !idRe.MatchString(q.Name) || q.Repo == "" || len(q.Commit) != 40 {
		return nil, fmt.Errorf("%s: needs a name, a repo and the 40-hex commit", file)
	}
	ids := map[string]bool{}
	for _, qq := range q.Questions {
		if !idRe.MatchString(qq.ID) || ids[qq.ID] {
			return nil, fmt.Errorf("%s: question id %q is invalid or repeated", file, qq.ID)
		}
		ids[qq.ID] = true
		if strings.TrimSpace(qq.Text) == "" || len(qq.Evidence) == 0 {
			return nil, fmt.Errorf("%s: question %s needs a text and evidence", file, qq.ID)
		}
	}
	return &q, nil
}

// copyNotes copies the notes of src (.md, .canvas, .obsidian/*.json;
// no hidden folder else) into dst, and returns the .md paths, slash
// separated and sorted. src is only read.
func copyNotes(src, dst string) ([]string, error) {
	var mds []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && strings.HasPrefix(d.Name(), ".") && rel != ".obsidian" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		ext := path.Ext(rel)
		switch {
		case ext == ".md" || ext == ".canvas":
		case path.Dir(rel) == ".obsidian" && ext == ".json":
		default:
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			return err
		}
		if ext == ".md" {
			mds = append(mds, rel)
		}
		return nil
	})
	sort.Strings(mds)
	return mds, err
}

func runRealVaults(ctx context.Context, vaults string, sets []*realQueries, log io.Writer) (*realReport, error) {
	rep := &realReport{Date: time.Now().UTC().Format(time.RFC3339), Scores: map[string]map[string]realScore{}, OneFile: map[string]int{}}
	sums := sumTable[realScore]{}
	groupSet := map[string]bool{}
	for _, set := range sets {
		info, err := runRealVault(ctx, filepath.Join(vaults, set.Name), set, rep, sums, groupSet, log)
		if err != nil {
			return nil, fmt.Errorf("vault %s: %w", set.Name, err)
		}
		rep.Vaults = append(rep.Vaults, info)
	}
	rep.Scores, rep.Groups = means(sums, groupSet)
	sort.Slice(rep.Groups, func(i, j int) bool {
		a, b := rep.Groups[i], rep.Groups[j]
		if (a == "all") != (b == "all") {
			return a == "all"
		}
		if (a == koreanGroup) != (b == koreanGroup) {
			return a == koreanGroup
		}
		return a < b
	})
	return rep, nil
}

const koreanGroup = "Korean vaults"

func runRealVault(ctx context.Context, src string, set *realQueries, rep *realReport, sums sumTable[realScore], groupSet map[string]bool, log io.Writer) (realVaultInfo, error) {
	info := realVaultInfo{Name: set.Name, Repo: set.Repo, Commit: set.Commit, Questions: len(set.Questions)}
	if st, err := os.Stat(src); err != nil || !st.IsDir() {
		return info, fmt.Errorf("no local copy at %s: run testdata/realvaults/fetch.sh %s", src, filepath.Dir(src))
	}
	dir, err := os.MkdirTemp("", "nexus-realvault-")
	if err != nil {
		return info, err
	}
	defer os.RemoveAll(dir)
	paths, err := copyNotes(src, dir)
	if err != nil {
		return info, fmt.Errorf("copy the notes: %w", err)
	}
	info.Notes = len(paths)
	have := map[string]bool{}
	for _, p := range paths {
		have[strings.ToLower(p)] = true
	}
	for _, q := range set.Questions {
		for _, e := range q.Evidence {
			if !have[strings.ToLower(e)] {
				return info, fmt.Errorf("question %s: evidence %s is not a note of the vault", q.ID, e)
			}
		}
	}
	if _, _, err := vault.Init(dir); err != nil {
		return info, fmt.Errorf("init vault: %w", err)
	}
	fmt.Fprintf(log, "%s: indexing %d notes…\n", set.Name, len(paths))
	start := time.Now()
	ix, db, closeBoth, err := indexBoth(ctx, dir, paths)
	if err != nil {
		return info, err
	}
	defer closeBoth()
	info.IndexSecs = time.Since(start).Seconds() // Nexus and FTS5 together

	matches := map[string]string{} // path → how Nexus matched it, for the misses
	nexus := func(text string) ([]string, error) {
		hits, err := ix.TopNotes(ctx, index.Query{Text: text, NoSnippets: true}, recallDepth)
		if err != nil {
			return nil, err
		}
		clear(matches)
		out := make([]string, len(hits))
		for i, h := range hits {
			out[i] = h.Path
			matches[h.Path] = h.Match
		}
		return out, nil
	}
	// oneFile: the first page of 'nexus search' (5 hits) is all one
	// file while other files match the words.
	oneFile := func(text string, notes []string) (bool, error) {
		res, err := ix.Search(ctx, index.Query{Text: text, Limit: 5, NoSnippets: true})
		if err != nil {
			return false, err
		}
		if len(res.Hits) < 2 || len(notes) < 2 {
			return false, nil
		}
		for _, h := range res.Hits[1:] {
			if h.Path != res.Hits[0].Path {
				return false, nil
			}
		}
		return true, nil
	}
	groups := []string{"all", set.Name}
	if set.Lang == "ko" {
		groups = append(groups, koreanGroup)
	}
	for _, g := range groups {
		groupSet[g] = true
	}
	for _, q := range set.Questions {
		ranked := map[string][]string{}
		if ranked[rvNexus], err = nexus(q.Text); err != nil {
			return info, fmt.Errorf("question %s: %w", q.ID, err)
		}
		if ranked[rvFTSAnd], err = ftsRank(ctx, db, q.Text, " "); err != nil {
			return info, fmt.Errorf("question %s: fts5: %w", q.ID, err)
		}
		if ranked[rvFTSOr], err = ftsRank(ctx, db, q.Text, " OR "); err != nil {
			return info, fmt.Errorf("question %s: fts5: %w", q.ID, err)
		}
		ranked[rvFTS] = ranked[rvFTSAnd]
		if len(ranked[rvFTS]) == 0 {
			ranked[rvFTS] = ranked[rvFTSOr]
		}
		ranks := map[string]int{}
		for _, e := range rvEngines {
			for _, g := range groups {
				ranks[e] = sums.at(e, g).add(ranked[e], q.Evidence)
			}
		}
		one, err := oneFile(q.Text, ranked[rvNexus])
		if err != nil {
			return info, fmt.Errorf("question %s: %w", q.ID, err)
		}
		if one {
			for _, g := range groups {
				rep.OneFile[g]++
			}
		}
		if ranks[rvNexus] != 1 {
			var top []string
			for _, p := range ranked[rvNexus][:min(3, len(ranked[rvNexus]))] {
				top = append(top, p+" ("+matches[p]+")")
			}
			rep.Misses = append(rep.Misses, realMiss{ID: q.ID, Text: q.Text, Want: q.Evidence, Nexus: ranks[rvNexus], FTS: ranks[rvFTS], Top: top})
		}
	}
	return info, nil
}

func (r *realReport) print(w io.Writer) {
	fmt.Fprintf(w, "real vaults, %s (GOMAXPROCS=%d, %s/%s)\n\n", r.Date, runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintln(w, "| vault | repository @ commit | notes | questions | index s (Nexus + FTS5) |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, v := range r.Vaults {
		fmt.Fprintf(w, "| %s | %s @ %.12s | %d | %d | %.1f |\n", v.Name, v.Repo, v.Commit, v.Notes, v.Questions, v.IndexSecs)
	}
	fmt.Fprintf(w, "\nhit@1 / hit@5 / MRR (first evidence within the top %d); one file = queries whose Nexus top 5 is one file while other files match\n\n", recallDepth)
	fmt.Fprint(w, "| group | n |")
	for _, e := range rvEngines {
		fmt.Fprintf(w, " %s |", e)
	}
	fmt.Fprintln(w, " one file |")
	fmt.Fprint(w, "|---|---|")
	for range rvEngines {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w, "---|")
	for _, g := range r.Groups {
		fmt.Fprintf(w, "| %s | %d |", g, r.Scores[rvNexus][g].N)
		for _, e := range rvEngines {
			s := r.Scores[e][g]
			fmt.Fprintf(w, " %.2f / %.2f / %.2f |", s.Hit1, s.Hit5, s.MRR)
		}
		fmt.Fprintf(w, " %d |\n", r.OneFile[g])
	}
	if len(r.Misses) > 0 {
		fmt.Fprintln(w, "\nNexus not first (rank 0: not in the top 10):")
		for _, m := range r.Misses {
			fmt.Fprintf(w, "  %s %q: nexus %d, fts5 %d; want %s; nexus top: %s\n", m.ID, m.Text, m.Nexus, m.FTS, strings.Join(m.Want, ", "), strings.Join(m.Top, " | "))
		}
	}
}
