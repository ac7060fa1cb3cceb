// Package snippets builds the Go programs a reader copies, as an importer
// would: each examples/go-* program, each Go block of README.md and
// docs/*.md that is a whole program (it has a package clause; the other
// blocks are fragments that show a call), and the program each package
// overview (doc.go) opens with goes into a new module in a temporary
// directory outside this repository, whose go.mod requires this
// module through a replace directive to this checkout. An import of an
// internal package, or of anything an importer cannot reach, fails the build
// there as it would for the reader.
package snippets

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

const module = "github.com/toolselect/toolselect"

// program is one Go program to build: its name and its files.
type program struct {
	name  string
	files map[string]string
}

// repoRoot is the checkout's root, as an absolute path (for the replace).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// goBlock matches a fenced Go block.
var goBlock = regexp.MustCompile("(?ms)^```go\n(.*?)^```")

// packageClause matches a Go file's package clause at the start of a line.
var packageClause = regexp.MustCompile(`(?m)^package \w+`)

// programs returns every examples/go-* program, every whole-program Go
// block of README.md and docs/*.md, and every package overview's program.
func programs(t *testing.T, root string) []program {
	t.Helper()
	var out []program
	dirs, err := filepath.Glob(filepath.Join(root, "examples", "go-*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		files := map[string]string{}
		paths, _ := filepath.Glob(filepath.Join(d, "*.go"))
		for _, p := range paths {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			files[filepath.Base(p)] = string(b)
		}
		out = append(out, program{name: "examples/" + filepath.Base(d), files: files})
	}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, doc := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, doc)
		for i, m := range goBlock.FindAllSubmatchIndex(b, -1) {
			src := string(b[m[2]:m[3]])
			if !packageClause.MatchString(src) {
				continue
			}
			line := 1 + bytes.Count(b[:m[0]], []byte("\n"))
			out = append(out, program{name: fmt.Sprintf("%s:%d (Go block %d)", rel, line, i+1), files: map[string]string{"main.go": src}})
		}
	}
	return append(out, overviewPrograms(t, root)...)
}

// overviews returns the import path of every package that has a doc.go
// outside internal/, cmd/ and the other folders that hold no library,
// keyed by the doc.go's path.
func overviews(t *testing.T, root string) map[string]string {
	t.Helper()
	skip := map[string]bool{".git": true, "internal": true, "cmd": true, "cabi": true, "examples": true,
		"python": true, "tests": true, "testdata": true, "bench": true}
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && skip[d.Name()] {
			return filepath.SkipDir
		}
		if d.Name() == "doc.go" {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			out[path] = module + "/" + filepath.ToSlash(rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mainFunc marks the code block of an overview that is its program.
var mainFunc = regexp.MustCompile(`(?m)^func main\(\) \{`)

// stdImports are the standard packages an overview's program may name; the
// program leaves its imports out (the qualified names say them), and the
// test writes them back from this table and the overviewed packages.
var stdImports = map[string]string{
	"context": "context", "errors": "errors", "fmt": "fmt", "json": "encoding/json", "log": "log",
	"slog": "log/slog", "http": "net/http", "os": "os", "signal": "os/signal", "strings": "strings", "time": "time",
}

// overviewPrograms returns the program each package overview opens with: a
// code block declaring func main, before the overview's first heading. The
// block holds the program without its package clause and imports, as
// go-sdk's and slog's overviews show theirs; they are added back here, and
// the whole must be laid out as gofmt writes it.
func overviewPrograms(t *testing.T, root string) []program {
	t.Helper()
	pkgs := overviews(t, root)
	byName := map[string]string{}
	for _, path := range pkgs {
		byName[path[strings.LastIndexByte(path, '/')+1:]] = path
	}
	var out []program
	for _, docPath := range slices.Sorted(maps.Keys(pkgs)) {
		pkgPath := pkgs[docPath]
		rel, _ := filepath.Rel(root, docPath)
		f, err := parser.ParseFile(token.NewFileSet(), docPath, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name == "main" {
			continue // a command's overview says how to run it
		}
		src, ok := openingProgram(f.Doc.Text())
		if !ok {
			t.Errorf("%s: the overview of %s does not open with a program (a code block declaring func main, before the first heading)", rel, pkgPath)
			continue
		}
		imports, err := importsOf(src, byName)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		file := "package main\n\nimport (\n"
		for _, p := range imports {
			file += fmt.Sprintf("\t%q\n", p)
		}
		file += ")\n\n" + src
		if formatted, err := format.Source([]byte(file)); err == nil && string(formatted) != file {
			t.Errorf("%s: the overview's program is not laid out as gofmt writes it:\n%s", rel, formatted)
		}
		out = append(out, program{name: rel + " (overview)", files: map[string]string{"main.go": file}})
	}
	return out
}

// openingProgram returns the overview's program: its first code block that
// declares func main, if it comes before the first heading.
func openingProgram(text string) (string, bool) {
	var p comment.Parser
	for _, b := range p.Parse(text).Content {
		switch b := b.(type) {
		case *comment.Heading:
			return "", false
		case *comment.Code:
			if mainFunc.MatchString(b.Text) {
				return b.Text, true
			}
		}
	}
	return "", false
}

// importsOf returns the import paths of the packages a program names: each
// qualifier that the program itself does not declare, looked up among the
// overviewed packages, then the standard ones of stdImports.
func importsOf(src string, byName map[string]string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", "package main\n\n"+src, 0)
	if err != nil {
		return nil, fmt.Errorf("the overview's program does not parse: %v", err)
	}
	unresolved := map[*ast.Ident]bool{}
	for _, id := range f.Unresolved {
		unresolved[id] = true
	}
	seen := map[string]bool{}
	var out []string
	var missing error
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok || !unresolved[id] || seen[id.Name] {
			return true
		}
		seen[id.Name] = true
		path, ok := byName[id.Name]
		if !ok {
			path, ok = stdImports[id.Name]
		}
		if !ok {
			missing = fmt.Errorf("the overview's program names package %q, which is neither overviewed nor in stdImports", id.Name)
			return true
		}
		out = append(out, path)
		return true
	})
	slices.Sort(out) // as gofmt orders one import block
	return out, missing
}

// goVersion is the go directive of this module's go.mod.
func goVersion(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	return string(m[1])
}

// importer is a new module outside the repository that requires this one
// through a replace directive to root.
type importer struct {
	t    *testing.T
	dir  string
	root string
}

func newImporter(t *testing.T, root string) *importer {
	t.Helper()
	dir := t.TempDir()
	if rel, err := filepath.Rel(root, dir); err == nil && !strings.HasPrefix(rel, "..") {
		t.Fatalf("the temporary directory %s is inside the repository %s: set TMPDIR elsewhere", dir, root)
	}
	gomod := fmt.Sprintf("module example.com/importer\n\ngo %s\n\nrequire %s v0.0.0\n\nreplace %s => %s\n",
		goVersion(t, root), module, module, root)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	// The checkout's go.sum has every checksum the library's graph needs,
	// so the build does not have to ask the proxy for them again.
	if sum, err := os.ReadFile(filepath.Join(root, "go.sum")); err == nil {
		if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &importer{t: t, dir: dir, root: root}
}

// goCmd runs the go command in the importer's module, with go.mod updated
// as needed (-mod=mod) and GOPROXY as the environment has it.
func (im *importer) goCmd(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = im.dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GO111MODULE=on")
	return cmd.CombinedOutput()
}

// build writes p into its own folder of the module and builds it.
func (im *importer) build(p program, sub string) ([]byte, string, error) {
	dir := filepath.Join(im.dir, sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		im.t.Fatal(err)
	}
	for name, src := range p.files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			im.t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(im.dir, "bin", sub)
	out, err := im.goCmd(ctx, "build", "-o", bin, "./"+sub)
	return out, bin, err
}

func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: the snippets are built with it, as an importer would")
	}
	if testing.Short() {
		t.Skip("builds every Go program of the docs in a module of its own (-short)")
	}
}

// TestProgramsBuildOutsideTheRepository builds each program in a module of
// its own, and runs the quick start there with no endpoint configured.
func TestProgramsBuildOutsideTheRepository(t *testing.T) {
	needGo(t)
	root := repoRoot(t)
	progs := programs(t, root)
	names := map[string]bool{}
	for _, p := range progs {
		names[p.name] = true
	}
	for _, want := range []string{"examples/go-quickstart", "examples/go-rank", "registry/doc.go (overview)"} {
		if !names[want] {
			t.Errorf("%s was not found: the test would build nothing for it", want)
		}
	}
	im := newImporter(t, root)
	for i, p := range progs {
		out, bin, err := im.build(p, fmt.Sprintf("p%d", i))
		if err != nil {
			t.Errorf("%s does not build outside the repository: %v\n%s", p.name, err, out)
			continue
		}
		if p.name != "examples/go-quickstart" {
			continue
		}
		cmd := exec.Command(bin)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "LLM_COMMON_TOOL_SELECTION_") && !strings.HasPrefix(kv, "OPENAI_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Dir = im.dir
		got, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(got), "run: get_weather -> light rain in Paris") {
			t.Errorf("the quick start built outside the repository did not run through: %v\n%s", err, got)
		}
	}
}

// An internal import fails the build in the importer's module: the check
// above would catch a snippet that only compiles inside this repository.
func TestInternalImportFailsOutside(t *testing.T) {
	needGo(t)
	root := repoRoot(t)
	im := newImporter(t, root)
	out, _, err := im.build(program{name: "internal", files: map[string]string{"main.go": `package main

import _ "github.com/toolselect/toolselect/internal/jsonscan"

func main() {}
`}}, "internal")
	if err == nil {
		t.Fatal("a program importing an internal package built outside the repository")
	}
	if !strings.Contains(string(out), "use of internal package") {
		t.Errorf("the build failed, but not for the internal import:\n%s", out)
	}
}
