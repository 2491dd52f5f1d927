package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryEnvironmentVariableIsDocumented finds each NEXUS_ variable the
// program reads (in its non-test sources, the CLI's and the library's) and
// requires docs/vault.md, where the environment is documented, to name it.
func TestEveryEnvironmentVariableIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/vault.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`"(NEXUS_[A-Z_]+)"`)
	found := map[string]string{}
	err = filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "examples", "node_modules", "nexus-bench", ".git":
				return filepath.SkipDir // not the program's own environment
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			found[m[1]] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 5 {
		t.Fatalf("found only %v: the walk is broken", found)
	}
	for name, path := range found {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("%s reads $%s, which docs/vault.md does not document", path, name)
		}
	}
}
