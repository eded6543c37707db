package native_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/native"
)

// packageOf is the package under internal/native of each manager, where
// its name is not the package's.
var packageOf = map[native.Manager]string{
	native.ManagerSkills:     "skilltools",
	native.ManagerNavigation: "nav",
}

// TestManagerLabelsMatchThePackages reads every manager package's source
// for its Bind(native.X, …) calls and checks that evokore.cue labels each
// native tool with the manager whose package binds it, so the table says
// truthfully where a tool's code lives.
func TestManagerLabelsMatchThePackages(t *testing.T) {
	boundIn := map[string]string{} // ToolID constant name → package dir
	dirs, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "testdata" {
			continue
		}
		fset := token.NewFileSet()
		files, _ := filepath.Glob(filepath.Join(d.Name(), "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != 2 {
					return true
				}
				if fn, ok := call.Fun.(*ast.SelectorExpr); !ok || fn.Sel.Name != "Bind" {
					return true
				}
				if id, ok := call.Args[0].(*ast.SelectorExpr); ok {
					if x, ok := id.X.(*ast.Ident); ok && x.Name == "native" {
						if prev, dup := boundIn[id.Sel.Name]; dup && prev != d.Name() {
							t.Errorf("%s is bound in %s and %s", id.Sel.Name, prev, d.Name())
						}
						boundIn[id.Sel.Name] = d.Name()
					}
				}
				return true
			})
		}
	}
	for _, s := range native.Specs() {
		want := packageOf[s.Manager]
		if want == "" {
			want = string(s.Manager)
		}
		got, ok := boundIn[camel(s.Name)]
		if !ok {
			t.Errorf("%s: no package binds it", s.Name)
			continue
		}
		if got != want {
			t.Errorf("%s is labelled manager %q (package %s) but package %s binds it", s.Name, s.Manager, want, got)
		}
	}
}

func camel(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}
