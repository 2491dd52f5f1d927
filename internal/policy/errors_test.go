package policy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestSentinelsLiveInErrorsGo keeps each package's sentinel errors in one
// place a reader can find (STYLE §3): every exported package-level
// variable named ErrX is declared in that package's errors.go, with a doc
// comment saying when it is returned.
func TestSentinelsLiveInErrorsGo(t *testing.T) {
	sentinels := 0
	for _, p := range listPackages(t) {
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
