package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRealScore: hit@1, hit@5 and MRR of one ranking, by hand.
func TestRealScore(t *testing.T) {
	tests := []struct {
		name            string
		ranked, ev      []string
		rank            int
		hit1, hit5, mrr float64
	}{
		{"first", []string{"a", "b"}, []string{"a"}, 1, 1, 1, 1},
		{"fifth", []string{"1", "2", "3", "4", "a"}, []string{"a"}, 5, 0, 1, 0.2},
		{"sixth: past the top 5, in MRR", []string{"1", "2", "3", "4", "5", "a"}, []string{"a"}, 6, 0, 0, 1.0 / 6},
		{"past the depth", []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "a"}, []string{"a"}, 0, 0, 0, 0},
		{"any of the evidence, case aside", []string{"x", "Notes/B.md"}, []string{"notes/a.md", "notes/b.md"}, 2, 0, 1, 0.5},
		{"missing", nil, []string{"a"}, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s realScore
			if got := s.add(tt.ranked, tt.ev); got != tt.rank {
				t.Errorf("rank %d, want %d", got, tt.rank)
			}
			s = s.mean()
			if s.N != 1 || !near(s.Hit1, tt.hit1) || !near(s.Hit5, tt.hit5) || !near(s.MRR, tt.mrr) {
				t.Errorf("got %+v, want hit@1 %v hit@5 %v MRR %v", s, tt.hit1, tt.hit5, tt.mrr)
			}
		})
	}
}

// TestLoadRealQueries: a query file needs its repository and commit, and
// every question an id, a text and evidence.
func TestLoadRealQueries(t *testing.T) {
	good := `{"name": "v", "repo": "o/r", "commit": "` + strings.Repeat("a", 40) + `", "lang": "en", "questions": [{"id": "q1", "text": "x", "kind": "name", "evidence": ["a.md"]}]}`
	tests := []struct {
		name, text, err string
	}{
		{"good", good, ""},
		{"short commit", strings.Replace(good, strings.Repeat("a", 40), "abc", 1), "commit"},
		{"no evidence", strings.Replace(good, `["a.md"]`, `[]`, 1), "evidence"},
		{"repeated id", strings.Replace(good, `}]}`, `}, {"id": "q1", "text": "y", "kind": "name", "evidence": ["a.md"]}]}`, 1), "repeated"},
		{"unknown field", strings.Replace(good, `"lang"`, `"language"`, 1), "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "q.json")
			if err := os.WriteFile(f, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := loadRealQueries(f)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("err %v, want %q", err, tt.err)
			}
		})
	}
}

// TestCommittedRealQueries: the committed query files load, hold at least
// 30 questions each and 120 in all, Korean vaults among them.
func TestCommittedRealQueries(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "realvaults", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	total, korean := 0, 0
	for _, f := range files {
		q, err := loadRealQueries(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(q.Questions) < 30 {
			t.Errorf("%s: %d questions, want at least 30", f, len(q.Questions))
		}
		total += len(q.Questions)
		if q.Lang == "ko" {
			korean++
		}
	}
	if total < 120 || korean < 2 {
		t.Errorf("%d questions, %d Korean vaults; want at least 120 and 2", total, korean)
	}
}

// TestRealVaultTiny: a run over a small vault scores both engines, leaves
// the source folder as it was, and counts a first page of one file.
func TestRealVaultTiny(t *testing.T) {
	vaults := t.TempDir()
	src := filepath.Join(vaults, "tiny")
	files := map[string]string{
		"References/Kevin Kelly.md": "# Clippings\n\nThe technium.\n",
		"Notes/kk.md":               "# Reading\n\nKevin Kelly wrote it.\n",
		"금형번호-기준.md":                "# 금형 번호 기준\n\n| 29 | 와이드 상판 |\n",
		".trash/old.md":             "# Kevin Kelly\n",
		"picture.png":               "not a note",
	}
	for p, text := range files {
		abs := filepath.Join(src, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set := &realQueries{Name: "tiny", Repo: "o/r", Commit: strings.Repeat("a", 40), Lang: "ko", Questions: []realQuery{
		{ID: "q1", Text: "Kevin Kelly", Kind: "name", Evidence: []string{"References/Kevin Kelly.md"}},
		{ID: "q2", Text: "금형 번호는", Kind: "particle", Evidence: []string{"금형번호-기준.md"}},
	}}
	rep, err := runRealVaults(context.Background(), vaults, []*realQueries{set}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Vaults) != 1 || rep.Vaults[0].Notes != 3 {
		t.Fatalf("vaults %+v, want one of 3 notes (.trash and the picture left out)", rep.Vaults)
	}
	nexus := rep.Scores[rvNexus][koreanGroup]
	if nexus.N != 2 || nexus.Hit1 != 1 {
		t.Errorf("nexus %+v, want both questions first", nexus)
	}
	if rep.Scores[rvFTS]["all"].N != 2 {
		t.Errorf("fts5 %+v, want both questions scored", rep.Scores[rvFTS]["all"])
	}
	if _, err := os.Stat(filepath.Join(src, ".nexus")); !os.IsNotExist(err) {
		t.Errorf("the source folder got a .nexus: %v", err)
	}
	var out bytes.Buffer
	rep.print(&out)
	if !strings.Contains(out.String(), "| Korean vaults | 2 |") {
		t.Errorf("report:\n%s", out.String())
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatal(err)
	}

	// Evidence that is not a note of the vault is an error, not a miss.
	set.Questions[0].Evidence = []string{"References/Nobody.md"}
	if _, err := runRealVaults(context.Background(), vaults, []*realQueries{set}, io.Discard); err == nil || !strings.Contains(err.Error(), "not a note") {
		t.Errorf("err %v, want evidence not a note", err)
	}
}
