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

// TestParticleVocabulary measures what the particle rule does to a real
// vault's words: NEXUS_PARTICLE_VAULTS=DIR[,DIR…] names the folders (the
// Korean real vaults of cmd/nexus-bench's fetch.sh). For every Hangul-
// ending word of the notes it counts the words koreanStem changes, and
// how many of those are nouns in their own right in the same notes: the
// word itself also stands with a particle (정확도를, 전문가가), so the
// "particle" it was stripped of is part of it and the stem is another
// word. It prints the counts by suffix and a sample to read
// (docs/search.md, "Korean particles and endings", has the figures).
func TestParticleVocabulary(t *testing.T) {
	dirs := os.Getenv("NEXUS_PARTICLE_VAULTS")
	if dirs == "" {
		t.Skip("NEXUS_PARTICLE_VAULTS not set")
	}
	freq := map[string]int{}
	for _, dir := range strings.Split(dirs, ",") {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, w := range strings.FieldsFunc(string(data), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
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
		if o {
			ownN++
			ownOcc += n
			r.own++
			r.ownOcc += n
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		if h.Sum32()%40 == 0 || o {
			sample = append(sample, fmt.Sprintf("%s → %s (%d×, own=%v)", w, stem, n, o))
		}
	}
	t.Logf("distinct Hangul-ending words %d; changed by the rule %d (%d occurrences); of those, nouns of their own %d (%d occurrences)", total, changed, occ, ownN, ownOcc)
	var sufs []string
	for s := range bySuffix {
		sufs = append(sufs, s)
	}
	sort.Slice(sufs, func(i, j int) bool { return bySuffix[sufs[i]].changed > bySuffix[sufs[j]].changed })
	for _, s := range sufs {
		r := bySuffix[s]
		t.Logf("  -%s: %d words (%d×), own nouns %d (%d×)", s, r.changed, r.occ, r.own, r.ownOcc)
	}
	sort.Strings(sample)
	for _, s := range sample {
		t.Logf("  sample %s", s)
	}
}

// TestParticlePrecision asks the Korean questions of the real-vault
// bench (NEXUS_PARTICLE_QUERIES=FILE.json,… with NEXUS_PARTICLE_VAULTS=
// the folder of their local copies, as cmd/nexus-bench's realvault
// takes them) and looks at every top-5 hit of a question with a word
// the rule changed: does the note hold the word as typed, or only
// through its stem, and then in which forms? A form that strips to the
// same stem (지역을 for 지역은) is the same word; any other is printed,
// to be read: a different word (정확히 for 정확도) is a flood.
func TestParticlePrecision(t *testing.T) {
	files, root := os.Getenv("NEXUS_PARTICLE_QUERIES"), os.Getenv("NEXUS_PARTICLE_VAULTS")
	if files == "" || root == "" {
		t.Skip("NEXUS_PARTICLE_QUERIES or NEXUS_PARTICLE_VAULTS not set")
	}
	var questions, stripped, hits, viaStem, sameWord int
	for _, f := range strings.Split(files, ",") {
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
			t.Fatal(err)
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
			for _, h := range top {
				hits++
				data, err := os.ReadFile(filepath.Join(dir, h.Path))
				if err != nil {
					t.Fatal(err)
				}
				text := strings.ToLower(string(data))
				via, same := false, true
				for _, i := range changed {
					if strings.Contains(text, strings.ToLower(words[i])) {
						continue
					}
					via = true
					forms := map[string]bool{}
					for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
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
						t.Logf("%s %q: %s holds %s→%s only as %s", q.ID, q.Text, h.Path, words[i], stems[i], strings.Join(fs[:min(8, len(fs))], " "))
					}
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
	t.Logf("%d Korean questions, %d with a word the rule changes; %d top-5 hits of those, %d holding a changed word only through its stem, %d of them in a form of the same word (stripping to the same stem)", questions, stripped, hits, viaStem, sameWord)
}
