package examples

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink matches a markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks checks that every relative link in the README, the docs
// index, the operations and demo pages and the examples' READMEs points at
// a file that exists, so the first pages a new user reads do not rot.
func TestDocLinks(t *testing.T) {
	pages := []string{"../README.md", "../docs/README.md", "../docs/operations.md", "../docs/demo.md"}
	more, _ := filepath.Glob("*/README.md")
	pages = append(pages, more...)
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			p := filepath.Join(filepath.Dir(page), filepath.FromSlash(target))
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s links to %s, which does not exist", page, m[1])
			}
		}
	}
}
