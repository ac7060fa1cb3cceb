package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// exports parses every non-test Go file of cabi and returns its //export functions.
func exports(t *testing.T) map[string]*ast.FuncDecl {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*ast.FuncDecl{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Doc == nil {
				continue
			}
			for _, c := range fn.Doc.List {
				if strings.HasPrefix(c.Text, "//export ") {
					exported := strings.TrimSpace(strings.TrimPrefix(c.Text, "//export "))
					if exported != fn.Name.Name {
						t.Errorf("//export %s is on func %s", exported, fn.Name.Name)
					}
					out[exported] = fn
				}
			}
		}
	}
	return out
}

// TestEveryExportIsGuarded proves that no panic can cross into C: every
// //export function names its int result rc and its first statement is
// `defer guard(&rc, out)` (or `defer guard(&rc, nil)` when it has no out).
func TestEveryExportIsGuarded(t *testing.T) {
	exps := exports(t)
	if len(exps) < 15 {
		t.Fatalf("found only %d exports; the parser missed some", len(exps))
	}
	for name, fn := range exps {
		res := fn.Type.Results
		if res == nil || len(res.List) != 1 || len(res.List[0].Names) != 1 || res.List[0].Names[0].Name != "rc" {
			t.Errorf("%s: the result must be the single named result rc", name)
			continue
		}
		if fn.Body == nil || len(fn.Body.List) == 0 {
			t.Errorf("%s: empty body", name)
			continue
		}
		def, ok := fn.Body.List[0].(*ast.DeferStmt)
		if !ok {
			t.Errorf("%s: the first statement is not `defer guard(&rc, ...)`", name)
			continue
		}
		call := def.Call
		id, ok := call.Fun.(*ast.Ident)
		if !ok || id.Name != "guard" || len(call.Args) != 2 {
			t.Errorf("%s: the first statement defers %T, not guard(&rc, out)", name, call.Fun)
			continue
		}
		u, ok := call.Args[0].(*ast.UnaryExpr)
		if !ok || u.Op != token.AND || u.X.(*ast.Ident).Name != "rc" {
			t.Errorf("%s: guard's first argument must be &rc", name)
		}
		hasOut := false
		for _, p := range fn.Type.Params.List {
			for _, n := range p.Names {
				if n.Name == "out" {
					hasOut = true
				}
			}
		}
		arg, _ := call.Args[1].(*ast.Ident)
		want := "nil"
		if hasOut {
			want = "out"
		}
		if arg == nil || arg.Name != want {
			t.Errorf("%s: guard's second argument must be %s", name, want)
		}
	}
}

// TestHeaderDocumentsEveryExport keeps toolselect.h and the exports in step.
func TestHeaderDocumentsEveryExport(t *testing.T) {
	h, err := os.ReadFile("toolselect.h")
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^int\s+(toolselect_\w+)\s*\(`).FindAllStringSubmatch(string(h), -1) {
		declared[m[1]] = true
	}
	exps := exports(t)
	for name := range exps {
		if !declared[name] {
			t.Errorf("%s is exported but not declared in toolselect.h", name)
		}
	}
	for name := range declared {
		if _, ok := exps[name]; !ok {
			t.Errorf("toolselect.h declares %s, which is not exported", name)
		}
	}
}
