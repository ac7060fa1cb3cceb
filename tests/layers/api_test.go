package layers

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// libraryPackages are the packages an importer reads: their exported names
// are the front hall, counted as `go doc -short` lists them (a const or var
// group is one entry, a constructor or typed const group under its type is
// one entry each). modeltest is the fake model importers test against.
var libraryPackages = []string{
	"registry", "rank", "selector", "executor", "mcpproxy", "rank/feedbackstore", "rank/embedcache", "modeltest",
}

// publicPackages are the library packages and otelsetup, the SDK set-up
// only programs import: all of them count against the budget and are
// documented alike.
var publicPackages = append(libraryPackages[:len(libraryPackages):len(libraryPackages)], "otelsetup")

// apiBudget is the most entries the seven packages may list together. It is
// a ratchet: lower it whenever a change removes entries; raise it only where
// a cut made the code write something twice.
// It was 170 for the seven library packages; the fake model (modeltest, 6
// entries), the SDK set-up (otelsetup, 2), typed tools (registry.SchemaFor,
// executor.AddTool), refusal rules as data (registry.Rule and its
// constants) and mcpproxy.ImportClientConfig (a client's file read with its
// placeholders kept as references, which only the client parser can do)
// raise it by what they add, as does the pin store replicas share
// (registry.PinStore, PinChange and OpenPins: the pin rules unchanged over
// a file or Redis). registry.ToolRules with Validate and Unmatched (per-tool
// allow/ask/deny rules as data the one rule, Eligibility.Decide, reads, so
// the proxy's permissions are no check outside it) took 1 of its slack.
const apiBudget = 184

// docPackage reads the package in dir (its non-test files) as go doc does.
func docPackage(t *testing.T, dir string) *doc.Package {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	pkg, err := doc.NewFromFiles(fset, files, "example.com/"+dir)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// apiEntries returns one string per `go doc -short` entry of the package in
// dir, and every exported declaration that has no doc comment.
func apiEntries(t *testing.T, dir string) (entries, undocumented, mutable []string) {
	t.Helper()
	pkg := docPackage(t, dir)
	values := func(kind string, vs []*doc.Value) {
		for _, v := range vs {
			entries = append(entries, kind+" "+strings.Join(v.Names, ","))
			if v.Doc == "" && !allValueSpecsDocumented(v.Decl) {
				undocumented = append(undocumented, kind+" "+strings.Join(v.Names, ","))
			}
			if kind == "var" {
				for _, n := range v.Names {
					if !strings.HasPrefix(n, "Err") {
						mutable = append(mutable, n)
					}
				}
			}
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			entries = append(entries, "func "+f.Name)
			if f.Doc == "" {
				undocumented = append(undocumented, "func "+f.Name)
			}
		}
	}
	values("const", pkg.Consts)
	values("var", pkg.Vars)
	funcs(pkg.Funcs)
	for _, ty := range pkg.Types {
		entries = append(entries, "type "+ty.Name)
		if ty.Doc == "" {
			undocumented = append(undocumented, "type "+ty.Name)
		}
		values("const", ty.Consts)
		values("var", ty.Vars)
		funcs(ty.Funcs)
		for _, m := range ty.Methods {
			if m.Doc == "" && !standardMethods[m.Name] {
				undocumented = append(undocumented, "method "+ty.Name+"."+m.Name)
			}
		}
	}
	return entries, undocumented, mutable
}

// standardMethods implement a standard interface (error, fmt.Stringer,
// errors.Is/As/Unwrap, encoding/json) whose contract is documented there.
var standardMethods = map[string]bool{
	"Error": true, "Unwrap": true, "String": true, "Is": true, "As": true,
	"MarshalJSON": true, "UnmarshalJSON": true, "MarshalText": true, "UnmarshalText": true,
}

// allValueSpecsDocumented reports whether every spec of an undocumented
// group carries its own comment.
func allValueSpecsDocumented(d *ast.GenDecl) bool {
	for _, s := range d.Specs {
		vs := s.(*ast.ValueSpec)
		if vs.Doc == nil && vs.Comment == nil {
			return false
		}
	}
	return true
}

// TestAPIBudget keeps the front hall small: at most apiBudget entries across
// the library packages, each documented, and no exported variable but
// sentinel errors (a caller could change any other under everyone's feet).
func TestAPIBudget(t *testing.T) {
	root := filepath.Join("..", "..")
	total := 0
	for _, pkg := range publicPackages {
		entries, undocumented, mutable := apiEntries(t, filepath.Join(root, pkg))
		total += len(entries)
		t.Logf("%-20s %3d", pkg, len(entries))
		if len(undocumented) > 0 {
			sort.Strings(undocumented)
			t.Errorf("%s: exported and undocumented: %s", pkg, strings.Join(undocumented, "; "))
		}
		if len(mutable) > 0 {
			t.Errorf("%s: exported variables that are not sentinel errors: %s", pkg, strings.Join(mutable, ", "))
		}
	}
	t.Logf("%-20s %3d (budget %d)", "total", total, apiBudget)
	if total > apiBudget {
		t.Errorf("the library packages list %d go doc entries, more than the budget of %d: unexport or move what only the CLI, the C ABI or the tests use", total, apiBudget)
	}
}

// packageNames returns every exported name of the package in dir as a doc
// link names it: "Name" for a top-level name, "Type.Method" for a method
// (an interface's too), "Type.Field" for a struct field.
func packageNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	pkg := docPackage(t, dir)
	names := map[string]bool{}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			for _, n := range v.Names {
				names[n] = true
			}
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			names[f.Name] = true
		}
	}
	values(pkg.Consts)
	values(pkg.Vars)
	funcs(pkg.Funcs)
	for _, ty := range pkg.Types {
		names[ty.Name] = true
		values(ty.Consts)
		values(ty.Vars)
		funcs(ty.Funcs)
		for _, m := range ty.Methods {
			names[ty.Name+"."+m.Name] = true
		}
		for _, spec := range ty.Decl.Specs {
			ts := spec.(*ast.TypeSpec)
			var fields *ast.FieldList
			switch tt := ts.Type.(type) {
			case *ast.StructType:
				fields = tt.Fields
			case *ast.InterfaceType:
				fields = tt.Methods
			}
			if fields == nil || ts.Name.Name != ty.Name {
				continue
			}
			for _, f := range fields.List {
				for _, n := range f.Names {
					names[ty.Name+"."+n.Name] = n.IsExported()
				}
			}
		}
	}
	return names
}

// docLink is a doc link as `go doc` reads one: [Name], [*Name],
// [Type.Method] or [pkg.Name].
var docLink = regexp.MustCompile(`\[\*?([A-Za-z_]\w*(?:\.\w+)?)\]`)

// TestPackageOverviews: each library package has a doc.go whose overview
// links its names (TestDocLinksResolve checks that each link names something
// that exists; tests/snippets builds the program the overview opens with).
func TestPackageOverviews(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, pkg := range publicPackages {
		b, err := os.ReadFile(filepath.Join(root, pkg, "doc.go"))
		if err != nil {
			t.Errorf("%s has no doc.go: %v", pkg, err)
			continue
		}
		if !docLink.Match(b) {
			t.Errorf("%s/doc.go links none of its names", pkg)
		}
	}
}

// TestDocCommentsNameTheirSubject: a doc comment starts with the name it
// documents (or "A", "An", "The" before it), as go doc and gopls expect, so a
// renamed or unexported declaration cannot keep a comment about another name.
func TestDocCommentsNameTheirSubject(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, dir := range publicPackages {
		pkg := docPackage(t, filepath.Join(root, dir))
		check := func(name, text string) {
			words := strings.Fields(text)
			if len(words) == 0 {
				return
			}
			switch words[0] {
			case name, "A", "An", "The":
				return
			}
			t.Errorf("%s: the comment of %s starts %q", dir, name, strings.Join(words[:min(len(words), 4)], " "))
		}
		for _, f := range pkg.Funcs {
			check(f.Name, f.Doc)
		}
		for _, ty := range pkg.Types {
			check(ty.Name, ty.Doc)
			for _, f := range ty.Funcs {
				check(f.Name, f.Doc)
			}
			for _, m := range ty.Methods {
				check(m.Name, m.Doc)
			}
		}
	}
}
