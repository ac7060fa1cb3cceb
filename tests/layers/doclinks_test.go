package layers

import (
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// linkedPackages are the packages whose doc comments link every Type.Member
// of their own they mention: every library package.
var linkedPackages = []string{"executor", "mcpproxy", "modeltest", "otelsetup", "rank", "rank/embedcache", "rank/feedbackstore", "registry", "selector"}

// plainMember is a Type.Member mention written as text; the lookbehind is
// done by hand (a name after a dot or a letter is part of a longer path).
var plainMember = regexp.MustCompile(`([A-Z]\w*)\.([A-Z]\w*)`)

// TestDocCommentsLinkMembers fails on a doc comment that writes one of its
// package's own Type.Member names as plain text instead of [Type.Member],
// naming file:line. Code blocks are left alone, and a mention that names
// nothing the package exports (another package's type) is not counted.
func TestDocCommentsLinkMembers(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, pkg := range linkedPackages {
		names := packageNames(t, filepath.Join(root, pkg))
		eachDocComment(t, root, pkg, func(at, text string) {
			for _, m := range plainMembers(text, names) {
				t.Errorf("%s: doc comment writes %s as text; link it as [%s]", at, m, m)
			}
		})
	}
}

// eachDocComment calls fn with the place (file:line, from the module root)
// and the text of every doc comment in pkg's non-test files.
func eachDocComment(t *testing.T, root, pkg string, fn func(at, text string)) {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		for _, cg := range docComments(f) {
			fn(fmt.Sprintf("%s:%d", rel, fset.Position(cg.Pos()).Line), cg.Text())
		}
	}
}

// TestDocLinksResolve fails on a doc link that names nothing: go doc prints
// a link it cannot resolve as plain text with its brackets (a renamed or
// unexported name, or [pkg.Name] for a package the file's package does not
// import), so such a link in any doc comment of a library package is an
// error. Links into this module's other packages must name what they export.
func TestDocLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	known := map[string]map[string]bool{}
	for _, pkg := range publicPackages {
		known[mod+"/"+pkg] = packageNames(t, filepath.Join(root, pkg))
	}
	for _, pkg := range publicPackages {
		p := docPackage(t, filepath.Join(root, pkg)).Parser()
		eachDocComment(t, root, pkg, func(at, text string) {
			for _, bad := range deadLinks(p.Parse(text), known) {
				t.Errorf("%s: doc comment links %s, which go doc cannot resolve", at, bad)
			}
		})
	}
}

// unresolvedLink is what is left of a doc link go doc could not resolve:
// [Name], [*Name], [Type.Member], [pkg.Name] or [pkg.Type.Member], still in
// brackets. As in go doc, the last name is capitalized: [setting.rule] or
// [name] is text, never a link.
var unresolvedLink = regexp.MustCompile(`\[\*?(?:[a-z][\w/]*\.)?(?:[A-Z]\w*\.)?[A-Z]\w*\]`)

// deadLinks returns the links of a parsed doc comment that go doc prints as
// text, and those into this module's packages that name nothing they export.
func deadLinks(d *comment.Doc, known map[string]map[string]bool) []string {
	var out []string
	var walk func(ts []comment.Text)
	walk = func(ts []comment.Text) {
		for _, x := range ts {
			switch x := x.(type) {
			case comment.Plain:
				out = append(out, unresolvedLink.FindAllString(string(x), -1)...)
			case *comment.Link:
				walk(x.Text)
			case *comment.DocLink:
				name := x.Name
				if x.Recv != "" {
					name = x.Recv + "." + name
				}
				if names, ok := known[x.ImportPath]; ok && name != "" && !names[name] {
					out = append(out, "["+path.Base(x.ImportPath)+"."+name+"]")
				}
			}
		}
	}
	for _, b := range d.Content {
		switch b := b.(type) {
		case *comment.Paragraph:
			walk(b.Text)
		case *comment.List:
			for _, it := range b.Items {
				for _, c := range it.Content {
					if para, ok := c.(*comment.Paragraph); ok {
						walk(para.Text)
					}
				}
			}
		}
	}
	return out
}

// docComments returns the comments go doc shows: those of declarations,
// their specs and the fields of struct and interface types.
func docComments(f *ast.File) []*ast.CommentGroup {
	var out []*ast.CommentGroup
	add := func(cg *ast.CommentGroup) {
		if cg != nil {
			out = append(out, cg)
		}
	}
	add(f.Doc)
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			add(n.Doc)
			return false // comments inside a body are not doc comments
		case *ast.GenDecl:
			add(n.Doc)
		case *ast.TypeSpec:
			add(n.Doc)
		case *ast.ValueSpec:
			add(n.Doc)
			add(n.Comment)
		case *ast.Field:
			add(n.Doc)
			add(n.Comment)
		}
		return true
	})
	return out
}

// plainMembers returns the package's Type.Member names written as plain text
// in a doc comment (outside code blocks and links).
func plainMembers(text string, names map[string]bool) []string {
	var out []string
	var walk func(ts []comment.Text)
	walk = func(ts []comment.Text) {
		for _, x := range ts {
			p, ok := x.(comment.Plain)
			if !ok {
				continue // links, and text inside them
			}
			s := string(p)
			for _, loc := range plainMember.FindAllStringIndex(s, -1) {
				if loc[0] > 0 && (strings.IndexByte("._[", s[loc[0]-1]) >= 0 || isAlnum(s[loc[0]-1])) {
					continue
				}
				if name := s[loc[0]:loc[1]]; names[name] {
					out = append(out, name)
				}
			}
		}
	}
	p := comment.Parser{
		LookupPackage: func(name string) (string, bool) { return name, true },
		LookupSym: func(recv, name string) bool {
			if recv != "" {
				name = recv + "." + name
			}
			return names[name]
		},
	}
	for _, b := range p.Parse(text).Content {
		switch b := b.(type) {
		case *comment.Paragraph:
			walk(b.Text)
		case *comment.List:
			for _, it := range b.Items {
				for _, c := range it.Content {
					if para, ok := c.(*comment.Paragraph); ok {
						walk(para.Text)
					}
				}
			}
		}
	}
	return out
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
