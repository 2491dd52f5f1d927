package scan

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
)

// TestCorpusFalsePositives is the false-positive budget of docs/scan.md:
// over a corpus of ordinary engineering notes in English and Korean
// (commands, ssh and curl usage, talk of keys, tokens and passwords,
// "ignore the flaky test"), at most 1 line in 1,000 may be refused.
func TestCorpusFalsePositives(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	lines, refused := 0, 0
	perFile := map[string]int{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				continue
			}
			lines++
			perFile[name]++
			if err := Text(line); err != nil {
				refused++
				t.Logf("refused %s: %q: %v", filepath.Base(name), line, err)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	for name, n := range perFile {
		if n < 500 {
			t.Errorf("%s has %d lines; the budget needs at least 500 per language", name, n)
		}
	}
	if lines < 1000 {
		t.Fatalf("corpus has %d lines, want at least 1,000", lines)
	}
	if refused*1000 > lines {
		t.Errorf("%d of %d ordinary lines refused, more than the budget of 1 in 1,000", refused, lines)
	}
}
