package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryRowLoopChecksRowsErr is a vet-like check over the module (issue
// 16 item 4): a function with a loop `for x.Next() { … }` must also call
// x.Err(), or a failed iteration (a dropped connection, a cancelled
// context) reads as the end of the rows — an infrastructure failure folded
// into a short answer. store.Collect and store.Each do it for their callers.
func TestEveryRowLoopChecksRowsErr(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || n == "node_modules" || (strings.HasPrefix(n, ".") && path != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			for _, miss := range rowLoopsWithoutErr(fn.Body) {
				t.Errorf("%s: %s loops over %s.Next() without checking %s.Err()", fset.Position(miss.pos), fn.Name.Name, miss.name, miss.name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("walked %d Go files, want the module", files)
	}
}

type rowLoop struct {
	name string
	pos  token.Pos
}

// rowLoopsWithoutErr lists the loops `for x.Next()` in body whose x has no
// x.Err() call anywhere in body.
func rowLoopsWithoutErr(body *ast.BlockStmt) []rowLoop {
	var loops []rowLoop
	errs := map[string]bool{}
	pbs := map[string]bool{} // *testing.PB parameters: Next without Err by design
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			for _, f := range n.Type.Params.List {
				if isTestingPB(f.Type) {
					for _, id := range f.Names {
						pbs[id.Name] = true
					}
				}
			}
		case *ast.ForStmt:
			if name, ok := methodCall(n.Cond, "Next"); ok && !pbs[name] {
				loops = append(loops, rowLoop{name, n.Pos()})
			}
		case *ast.CallExpr:
			if name, ok := methodCall(n, "Err"); ok {
				errs[name] = true
			}
		}
		return true
	})
	var missing []rowLoop
	for _, l := range loops {
		if !errs[l.name] {
			missing = append(missing, l)
		}
	}
	return missing
}

// methodCall reports x for an expression x.method() without arguments.
func methodCall(e ast.Expr, method string) (string, bool) {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 0 {
		return "", false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != method {
		return "", false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return "", false
	}
	return id.Name, true
}

func isTestingPB(e ast.Expr) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "PB" {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "testing"
}
