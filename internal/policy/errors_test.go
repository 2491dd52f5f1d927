package policy

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSentinelsLiveInErrorsGo keeps each package's sentinel errors in one
// place a reader can find (STYLE §3): every exported package-level
// variable named ErrX is declared in that package's errors.go, with a doc
// comment saying when it is returned.
func TestSentinelsLiveInErrorsGo(t *testing.T) {
	out, err := exec.Command("go", "list", "-e", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	type listed struct {
		ImportPath string
		Dir        string
		GoFiles    []string
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	sentinels := 0
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.VAR {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for _, id := range vs.Names {
						if !strings.HasPrefix(id.Name, "Err") || !id.IsExported() {
							continue
						}
						sentinels++
						where := strings.TrimPrefix(p.ImportPath, module+"/") + "/" + name
						if name != "errors.go" {
							t.Errorf("%s: %s belongs in errors.go, with the package's other sentinels", where, id.Name)
						}
						doc := vs.Doc
						if doc == nil && len(gd.Specs) == 1 {
							doc = gd.Doc
						}
						if doc == nil || !strings.HasPrefix(doc.Text(), id.Name+" ") {
							t.Errorf("%s: %s has no doc comment starting with its name", where, id.Name)
						}
					}
				}
			}
		}
	}
	if sentinels < 20 {
		t.Fatalf("found only %d sentinels: the walk is broken", sentinels)
	}
}
