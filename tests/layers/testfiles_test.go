package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// stdlibTwins are helper names that test files used to define for what the
// standard library already does, with what to call instead.
var stdlibTwins = map[string]string{
	"contains":       "slices.Contains or strings.Contains",
	"containsString": "slices.Contains",
	"indexOf":        "slices.Index",
	"keys":           "maps.Keys",
	"sortedKeys":     "slices.Sorted(maps.Keys(m))",
	"reverse":        "slices.Reverse",
}

// plainChecks are the methods of *testing.T, *testing.B, *testing.F and
// testing.TB that report a failure; a file asserting with testify uses
// assert and require instead.
var plainChecks = map[string]bool{"Error": true, "Errorf": true, "Fatal": true, "Fatalf": true}

// TestOneAssertionStylePerTestFile fails on a test file that mixes testify
// (assert, require) with plain t.Error/t.Errorf/t.Fatal/t.Fatalf, and on a
// test helper that redoes a standard library function, naming file:line. A
// reader of one file meets one way of saying what failed.
func TestOneAssertionStylePerTestFile(t *testing.T) {
	root := filepath.Join("..", "..")
	cmd := exec.Command("git", "ls-files", "-z", "--", "*_test.go")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	fset := token.NewFileSet()
	for _, path := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if path == "" {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, path))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		testify := false
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			testify = testify || strings.HasPrefix(p, "github.com/stretchr/testify/")
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
				if use, dup := stdlibTwins[fn.Name.Name]; dup {
					t.Errorf("%s: func %s redoes the standard library; use %s", fset.Position(fn.Pos()), fn.Name.Name, use)
				}
			}
		}
		if !testify {
			continue
		}
		testers := testingParams(f)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !plainChecks[sel.Sel.Name] {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && testers[x.Name] {
				t.Errorf("%s: %s.%s in a file that asserts with testify; use assert or require", fset.Position(call.Pos()), x.Name, sel.Sel.Name)
			}
			return true
		})
	}
}

// testingParams returns the names the file gives to parameters of type
// *testing.T, *testing.B, *testing.F or testing.TB.
func testingParams(f *ast.File) map[string]bool {
	names := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		ft, ok := n.(*ast.FuncType)
		if !ok || ft.Params == nil {
			return true
		}
		for _, p := range ft.Params.List {
			typ := p.Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			sel, ok := typ.(*ast.SelectorExpr)
			if !ok {
				continue
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "testing" {
				continue
			}
			switch sel.Sel.Name {
			case "T", "B", "F", "TB":
				for _, name := range p.Names {
					names[name.Name] = true
				}
			}
		}
		return true
	})
	return names
}
