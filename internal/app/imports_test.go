package app_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// testPackages are the packages of the module whose purpose is tests: they
// may import testing, and only tests may import them.
var testPackages = []string{
	"waymark/internal/store/storetest", // storetest.Each: every test on SQLite and PostgreSQL
	"waymark/internal/waymarktest",     // the scenario tests' application, server and typed client
	"waymark/internal/typo3/typo3test", // a TYPO3 database of each test's own on MariaDB and PostgreSQL
}

// TestNoProductionPackageLinksTesting checks ("production
// code does not import testing"): no non-test file of a package outside
// testPackages imports testing (or testing/…), directly or through another
// package of the module — so the binary does not link it and no behaviour
// depends on running inside a test binary.
func TestNoProductionPackageLinksTesting(t *testing.T) {
	root := moduleRoot(t)
	imports := map[string][]string{} // package path → imports of its non-test files
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "e2e") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := "waymark"
		if rel != "." {
			pkg += "/" + filepath.ToSlash(rel)
		}
		list := imports[pkg]
		for _, spec := range f.Imports {
			p, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			list = append(list, p)
		}
		imports[pkg] = list
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < 20 {
		t.Fatalf("found only %d packages under %s; is the walk wrong?", len(imports), root)
	}
	for _, p := range testPackages {
		if _, ok := imports[p]; !ok {
			t.Errorf("allowed test package %s does not exist: update testPackages", p)
		}
	}
	// chain returns the import path from pkg to testing ("" when none).
	memo := map[string]string{}
	var chain func(pkg string, seen map[string]bool) string
	chain = func(pkg string, seen map[string]bool) string {
		if c, ok := memo[pkg]; ok {
			return c
		}
		if seen[pkg] {
			return ""
		}
		seen[pkg] = true
		c := ""
		for _, imp := range imports[pkg] {
			if imp == "testing" || strings.HasPrefix(imp, "testing/") {
				c = pkg + " → " + imp
				break
			}
			if _, ours := imports[imp]; ours {
				if sub := chain(imp, seen); sub != "" {
					c = pkg + " → " + sub
					break
				}
			}
		}
		memo[pkg] = c
		return c
	}
	for pkg := range imports {
		if slices.Contains(testPackages, pkg) {
			continue
		}
		if c := chain(pkg, map[string]bool{}); c != "" {
			t.Errorf("production package %s links testing: %s", pkg, c)
		}
	}
}

// moduleRoot is the directory of go.mod above the working directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}
