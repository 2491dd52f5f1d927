package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunEOnlyHandsOver keeps every command to one pattern (STYLE §1):
// flags go into an options struct, and the cobra RunE closure only hands
// over to a plain runX function that calls the library and formats. The
// closure may copy what only cobra knows (the arguments, whether a flag
// was given) into that struct first; anything else — parsing, checks,
// library calls, output — belongs in runX, where it can be read and
// tested without cobra.
func TestRunEOnlyHandsOver(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	closures := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			if key, ok := kv.Key.(*ast.Ident); !ok || (key.Name != "RunE" && key.Name != "Run") {
				return true
			}
			fn, ok := kv.Value.(*ast.FuncLit)
			if !ok {
				return true
			}
			closures++
			if why := handsOver(fn.Body.List); why != "" {
				t.Errorf("%s: RunE %s; move the work into a runX function", fset.Position(kv.Pos()), why)
			}
			return false
		})
	}
	if closures < 30 {
		t.Fatalf("found only %d RunE closures: the walk is broken", closures)
	}
}

// handsOver says what is wrong with a RunE body, or "" when it is only
// copies into the options struct followed by return runX(...).
func handsOver(stmts []ast.Stmt) string {
	if len(stmts) == 0 {
		return "is empty"
	}
	for _, s := range stmts[:len(stmts)-1] {
		as, ok := s.(*ast.AssignStmt)
		if !ok || as.Tok != token.ASSIGN || len(as.Lhs) != len(as.Rhs) {
			return "does more than copy into the options"
		}
		for i := range as.Lhs {
			if _, ok := as.Lhs[i].(*ast.SelectorExpr); !ok {
				return "assigns to something other than an options field"
			}
			if !cobraOnly(as.Rhs[i]) {
				return "computes a value instead of copying one from cobra"
			}
		}
	}
	ret, ok := stmts[len(stmts)-1].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return "does not end in return runX(...)"
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok {
		return "does not end in return runX(...)"
	}
	fn, ok := call.Fun.(*ast.Ident)
	if !ok || !strings.HasPrefix(fn.Name, "run") {
		return "does not end in return runX(...)"
	}
	for _, a := range call.Args {
		if !cobraOnly(a) {
			return "passes a computed value to " + fn.Name
		}
	}
	return ""
}

// cobraOnly reports whether e is a plain name (g, o, args), its address,
// one argument (args[0]), or a question to cobra: whether a flag was given
// (cmd.Flags().Changed("x")), the command tree (cmd.Root()).
func cobraOnly(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return true
	case *ast.UnaryExpr:
		_, ok := e.X.(*ast.Ident)
		return e.Op == token.AND && ok
	case *ast.IndexExpr:
		x, ok := e.X.(*ast.Ident)
		_, lit := e.Index.(*ast.BasicLit)
		return ok && x.Name == "args" && lit
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		if recv, ok := sel.X.(*ast.Ident); ok && recv.Name == "cmd" && sel.Sel.Name == "Root" && len(e.Args) == 0 {
			return true
		}
		if sel.Sel.Name != "Changed" || len(e.Args) != 1 {
			return false
		}
		inner, ok := sel.X.(*ast.CallExpr)
		if !ok {
			return false
		}
		flags, ok := inner.Fun.(*ast.SelectorExpr)
		if !ok || flags.Sel.Name != "Flags" {
			return false
		}
		recv, ok := flags.X.(*ast.Ident)
		return ok && recv.Name == "cmd"
	}
	return false
}
