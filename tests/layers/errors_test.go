package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestErrorMessageStyle holds the library packages to one style for the
// errors they make: a message never starts with a package name
// ("rank: ...": the caller knows what it called, and sentinels and error
// types say where an error came from), context is added by wrapping
// ("what: %w"), and an error given to fmt.Errorf is wrapped with %w, never
// flattened with %v or %s, so errors.Is and errors.As still see it. Panics
// may name their package: they report a misuse of it.
func TestErrorMessageStyle(t *testing.T) {
	root := filepath.Join("..", "..")
	var names []string
	for _, pkg := range libraryPackages {
		names = append(names, path.Base(pkg)+": ")
	}
	for _, pkg := range libraryPackages {
		paths, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				fn := callee(call)
				if fn != "errors.New" && fn != "fmt.Errorf" {
					return true
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				msg, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
				}
				for _, name := range names {
					if strings.HasPrefix(msg, name) {
						t.Errorf("%s: %s(%q) starts with a package name", fset.Position(lit.Pos()), fn, msg)
					}
				}
				if fn == "fmt.Errorf" && !strings.Contains(msg, "%w") {
					for _, a := range call.Args[1:] {
						if id, ok := a.(*ast.Ident); ok && (id.Name == "err" || strings.HasSuffix(id.Name, "Err")) {
							t.Errorf("%s: fmt.Errorf(%q) flattens %s instead of wrapping it with %%w", fset.Position(lit.Pos()), msg, id.Name)
						}
					}
				}
				return true
			})
		}
	}
}

// callee names a call's function as pkg.Func, or "" for anything else.
func callee(call *ast.CallExpr) string {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return x.Name + "." + sel.Sel.Name
}
