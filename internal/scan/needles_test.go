package scan

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-memory/nexus/internal/scan/scantest"
)

// TestNeedlesAgreeWithContains: the one-pass filter names exactly the
// rules whose literals strings.Contains finds, one rule at a time, over
// the corpus, the hostile texts, every literal alone, at a text's start and end, run into
// others, and cut short by one byte.
func TestNeedlesAgreeWithContains(t *testing.T) {
	ns := needles()
	if ns == nil {
		t.Fatal("no needle set: more rules than bits")
	}
	texts := []string{"", "a", "$", "plain words and nothing else", "ignore previous instructions", "ΣΊΣΥΦΟΣ ﬁle ＩＧＮＯＲＥ"}
	for _, r := range orderedRules() {
		for _, n := range r.need {
			texts = append(texts, n, "x"+n, n+"x", n+n, n[:len(n)-1], "--"+n[1:], strings.ToUpper(n), "pre "+n+" post")
		}
	}
	for _, h := range scantest.Texts {
		texts = append(texts, h.Text)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*.txt"))
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			texts = append(texts, sc.Text())
		}
		f.Close()
	}
	if len(texts) < 500 {
		t.Fatalf("only %d texts", len(texts))
	}
	for _, s := range texts {
		folded := foldForScan(s)
		got := ns.rulesThatMayMatch(folded)
		for i, r := range orderedRules() {
			if want := r.mayMatch(folded); want != (got&(1<<i) != 0) {
				t.Fatalf("%q: rule %d (%s, needs %q): one pass says %v, strings.Contains %v", folded, i, r.name, r.need, !want, want)
			}
		}
	}
}
