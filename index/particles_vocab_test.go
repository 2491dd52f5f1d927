package index

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/nexus-memory/nexus/vault"
)

// particleFixture holds a handful of Korean notes (vault/) and questions
// about them (questions.json, in the form of cmd/nexus-bench's real-vault
// question sets), written to hold words the particle rule must strip
// (전문가가, 정확도를, 데이터를, 이후에는) and must keep (전문가, 정확도,
// 데이터), and words it strips to another word (현재가, 행추가). Both
// tests below run on it by default and compare their report with a golden
// file there (go test -run Particle -update rewrites them); the
// environment variables point the same code at the real vaults.
var particleFixture = filepath.Join("testdata", "particles")

// checkParticleGolden compares report with the golden file name under
// particleFixture, or rewrites it under -update.
func checkParticleGolden(t *testing.T, name, report string) {
	t.Helper()
	golden := filepath.Join(particleFixture, name)
	if *update {
		if err := os.WriteFile(golden, []byte(report), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./index -run Particle -update)", err)
	}
	if report != string(want) {
		t.Errorf("report differs from %s (go test ./index -run Particle -update, then read the diff):\n%s", golden, report)
	}
}

// particleWords splits text into words: runs of letters and digits.
func particleWords(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// TestParticleVocabulary measures what the particle rule does to a
// vault's words: for every Hangul-ending word of the notes it counts the
// words koreanStem changes, and how many of those are nouns in their own
// right in the same notes: the word itself also stands with a particle
// (정확도를, 전문가가), so the "particle" it was stripped of is part of it
// and the stem is another word. By default it reads the fixture, checks a
// table of words and the golden report (every changed word listed).
// NEXUS_PARTICLE_VAULTS=DIR[,DIR…] names other folders instead (the
// Korean real vaults of cmd/nexus-bench's fetch.sh); then it prints the
// counts by suffix and a sample to read, every 40th word by hash and every
// noun of its own (docs/search.md, "Korean particles and endings", has
// the figures).
func TestParticleVocabulary(t *testing.T) {
	if dirs := os.Getenv("NEXUS_PARTICLE_VAULTS"); dirs != "" {
		report, _ := particleVocabulary(t, strings.Split(dirs, ","), 40)
		t.Log("\n" + report)
		return
	}
	report, changed := particleVocabulary(t, []string{filepath.Join(particleFixture, "vault")}, 1)
	for _, c := range []struct {
		word    string
		changed bool
		own     bool // a noun of its own: stripped to another word
	}{
		{"전문가", false, false}, // 전문 with 가 would need a vowel before 가
		{"전문가가", true, false},
		{"정확도", false, false}, // 도 after two syllables is kept
		{"정확도를", true, false},
		{"정확도는", true, false},
		{"데이터", false, false},
		{"데이터를", true, false},
		{"데이터도", true, false},
		{"데이터에만", true, false}, // stacked: stripped once, to 데이터에
		{"이후에는", true, false},
		{"현재가", true, true}, // 현재가를 stands too: 현재 is another word
		{"행추가", true, true},
		{"행추가를", true, false},
		{"현재시각은", true, false},
	} {
		own, ok := changed[c.word]
		if ok != c.changed || own != c.own {
			t.Errorf("%s: changed %v own %v, want changed %v own %v", c.word, ok, own, c.changed, c.own)
		}
	}
	checkParticleGolden(t, "vocabulary.golden", report)
}

// particleVocabulary is the report of TestParticleVocabulary over the
// notes under dirs, sampling every every-th changed word by hash (and
// every noun of its own), and the changed words, each with whether it
// is a noun of its own.
func particleVocabulary(t *testing.T, dirs []string, every uint32) (string, map[string]bool) {
	t.Helper()
	freq := map[string]int{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, w := range particleWords(string(data)) {
				if last, _ := utf8.DecodeLastRuneInString(w); unicode.Is(unicode.Hangul, last) {
					freq[w]++
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// A word is a noun of its own when it also stands with one of the
	// subject or object particles (이 가 을 를), which follow no other
	// particle: 이후에는 is 이후에 with 는, but no word is 이후에를.
	own := func(w string) bool {
		for _, p := range []string{"이", "가", "을", "를"} {
			if freq[w+p] > 0 {
				return true
			}
		}
		return false
	}
	type row struct{ changed, own, occ, ownOcc int }
	bySuffix := map[string]*row{}
	changedWords := map[string]bool{}
	var total, changed, ownN, occ, ownOcc int
	var sample []string
	for w, n := range freq {
		total++
		stem := koreanStem(w)
		if stem == w {
			continue
		}
		suf := strings.TrimPrefix(w, stem)
		r := bySuffix[suf]
		if r == nil {
			r = &row{}
			bySuffix[suf] = r
		}
		changed++
		occ += n
		r.changed++
		r.occ += n
		o := own(w)
		changedWords[w] = o
		if o {
			ownN++
			ownOcc += n
			r.own++
			r.ownOcc += n
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		if h.Sum32()%every == 0 || o {
			sample = append(sample, fmt.Sprintf("%s → %s (%d×, own=%v)", w, stem, n, o))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "distinct Hangul-ending words %d; changed by the rule %d (%d occurrences); of those, nouns of their own %d (%d occurrences)\n", total, changed, occ, ownN, ownOcc)
	var sufs []string
	for s := range bySuffix {
		sufs = append(sufs, s)
	}
	sort.Slice(sufs, func(i, j int) bool {
		if a, b := bySuffix[sufs[i]].changed, bySuffix[sufs[j]].changed; a != b {
			return a > b
		}
		return sufs[i] < sufs[j]
	})
	for _, s := range sufs {
		r := bySuffix[s]
		fmt.Fprintf(&b, "  -%s: %d words (%d×), own nouns %d (%d×)\n", s, r.changed, r.occ, r.own, r.ownOcc)
	}
	sort.Strings(sample)
	for _, s := range sample {
		fmt.Fprintf(&b, "  sample %s\n", s)
	}
	return b.String(), changedWords
}

// TestParticlePrecision asks Korean questions of their vault and looks
// at every top-5 hit of a question with a word the rule changed: does
// the note hold the word as typed, or only through its stem, and then in
// which forms? A form that strips to the same stem (지역을 for 지역은) is
// the same word; any other is listed, to be read: a different word
// (현재시각은 for 현재가) is a flood. By default it asks the fixture's
// questions and compares the report with its golden file;
// NEXUS_PARTICLE_QUERIES=FILE.json,… with NEXUS_PARTICLE_VAULTS=the
// folder of their local copies, as cmd/nexus-bench's realvault takes
// them, asks the real vaults' and prints the report.
func TestParticlePrecision(t *testing.T) {
	files, root := os.Getenv("NEXUS_PARTICLE_QUERIES"), os.Getenv("NEXUS_PARTICLE_VAULTS")
	if files != "" {
		if root == "" {
			t.Fatal("NEXUS_PARTICLE_QUERIES needs NEXUS_PARTICLE_VAULTS, the folder of the vaults' local copies")
		}
		t.Log("\n" + particlePrecision(t, strings.Split(files, ","), root, false))
		return
	}
	report := particlePrecision(t, []string{filepath.Join(particleFixture, "questions.json")}, particleFixture, true)
	checkParticleGolden(t, "precision.golden", report)
}

// particlePrecision is the report of TestParticlePrecision for the
// question sets in files, whose vaults are root/NAME; with every, it
// lists every top-5 hit of a question with a changed word too.
func particlePrecision(t *testing.T, files []string, root string, every bool) string {
	t.Helper()
	var b strings.Builder
	var questions, stripped, hits, viaStem, sameWord int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var set struct {
			Name      string
			Lang      string
			Questions []struct{ ID, Text string }
		}
		if err := json.Unmarshal(data, &set); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if set.Lang != "ko" {
			continue
		}
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, set.Name))); err != nil {
			t.Fatal(err)
		}
		if _, _, err := vault.Init(dir); err != nil {
			t.Fatal(err)
		}
		v, err := vault.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		ix := mustOpen(t, v, Options{NoServe: true})
		if err := ix.Rebuild(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		for _, q := range set.Questions {
			questions++
			words := parseQueryText(foldString(q.Text)).words
			stems, _ := koreanStems(words)
			var changed []int
			for i := range words {
				if stems[i] != "" && stems[i] != words[i] {
					changed = append(changed, i)
				}
			}
			if len(changed) == 0 {
				continue
			}
			stripped++
			top, err := ix.TopNotes(context.Background(), Query{Text: q.Text, NoSnippets: true}, 5)
			if err != nil {
				t.Fatal(err)
			}
			// By path: the golden file should not hang on the order of
			// equal scores.
			sort.Slice(top, func(i, j int) bool { return top[i].Path < top[j].Path })
			for _, h := range top {
				hits++
				data, err := os.ReadFile(filepath.Join(dir, h.Path))
				if err != nil {
					t.Fatal(err)
				}
				text := strings.ToLower(string(data))
				via, same := false, true
				var viaWords []string
				for _, i := range changed {
					if strings.Contains(text, strings.ToLower(words[i])) {
						continue
					}
					via = true
					viaWords = append(viaWords, words[i])
					forms := map[string]bool{}
					for _, w := range particleWords(text) {
						if strings.Contains(w, stems[i]) && koreanStem(w) != stems[i] {
							forms[w] = true
						}
					}
					if len(forms) > 0 {
						same = false
						var fs []string
						for w := range forms {
							fs = append(fs, w)
						}
						sort.Strings(fs)
						fmt.Fprintf(&b, "%s %q: %s holds %s→%s only as %s\n", q.ID, q.Text, h.Path, words[i], stems[i], strings.Join(fs[:min(8, len(fs))], " "))
					}
				}
				if every {
					if viaWords == nil {
						viaWords = []string{"-"}
					}
					fmt.Fprintf(&b, "%s %q: hit %s, through the stem only: %s\n", q.ID, q.Text, h.Path, strings.Join(viaWords, " "))
				}
				if via {
					viaStem++
					if same {
						sameWord++
					}
				}
			}
		}
	}
	fmt.Fprintf(&b, "%d Korean questions, %d with a word the rule changes; %d top-5 hits of those, %d holding a changed word only through its stem, %d of them in a form of the same word (stripping to the same stem)\n", questions, stripped, hits, viaStem, sameWord)
	return b.String()
}
