package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// registryRules reads the constants of type registry.Rule from
// registry/rule.go: constant name to its value.
func registryRules(t *testing.T, root string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, "registry", "rule.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Rule" {
				continue
			}
			for i, n := range vs.Names {
				v, err := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				rules[n.Name] = v
			}
		}
	}
	if len(rules) == 0 {
		t.Fatal("registry/rule.go declares no constant of type Rule")
	}
	return rules
}

// hintTable returns the rule constants (registry.RuleX, as RuleX) keying
// the map literal assigned to the package-level var name in file.
func hintTable(t *testing.T, file, name string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if len(vs.Names) != 1 || vs.Names[0].Name != name || len(vs.Values) != 1 {
				continue
			}
			lit, ok := vs.Values[0].(*ast.CompositeLit)
			if !ok {
				t.Fatalf("%s: %s is not a map literal", file, name)
			}
			var keys []string
			for _, el := range lit.Elts {
				kv := el.(*ast.KeyValueExpr)
				if sel, ok := kv.Key.(*ast.SelectorExpr); ok {
					keys = append(keys, sel.Sel.Name)
				} else {
					t.Errorf("%s: %s keys a hint by %T, not by a registry.Rule constant", file, name, kv.Key)
				}
			}
			return keys
		}
	}
	t.Fatalf("%s declares no var %s", file, name)
	return nil
}

// Every refusal rule is one registry.Rule, and every front door words each
// one in its own names from its own table keyed by the rule (an entry may be
// "" where the reason says it all): the Go executor, the MCP proxy, the CLI,
// and Python, which hands its table to the C library. A rule added to the
// registry without a front door's entry fails here. The C header spells the
// rules as registry.Rule does: its strings are the wire values.
func TestEveryRuleIsWordedByEveryFrontDoor(t *testing.T) {
	root := filepath.Join("..", "..")
	rules := registryRules(t, root)
	var names, values []string
	for n, v := range rules {
		names = append(names, n)
		values = append(values, v)
	}
	slices.Sort(names)
	slices.Sort(values)

	for _, door := range []struct{ file, table string }{
		{"executor/errors.go", "goHints"},
		{"mcpproxy/proxy.go", "proxyHints"},
		{"cmd/toolselect/rank.go", "cliHints"},
	} {
		keys := hintTable(t, filepath.Join(root, door.file), door.table)
		slices.Sort(keys)
		if !slices.Equal(keys, names) {
			t.Errorf("%s: %s words the rules %v; registry.Rule has %v", door.file, door.table, keys, names)
		}
	}

	// Python's table, in whichever module of the package defines it.
	pyFiles, err := filepath.Glob(filepath.Join(root, "python", "toolselect", "*.py"))
	if err != nil {
		t.Fatal(err)
	}
	var block [][]byte
	for _, f := range pyFiles {
		py, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if block = regexp.MustCompile(`(?s)\n_RULE_HINTS(?:: [^=]+)? = \{\n(.*?)\n\}`).FindSubmatch(py); block != nil {
			break
		}
	}
	if block == nil {
		t.Fatal("no module of python/toolselect defines _RULE_HINTS")
	}
	var pyKeys []string
	for _, m := range regexp.MustCompile(`(?m)^\s+"(\w+)":`).FindAllSubmatch(block[1], -1) {
		pyKeys = append(pyKeys, string(m[1]))
	}
	slices.Sort(pyKeys)
	if !slices.Equal(pyKeys, values) {
		t.Errorf("python/toolselect: _RULE_HINTS words the rules %v; registry.Rule has %v", pyKeys, values)
	}

	h, err := os.ReadFile(filepath.Join(root, "cabi", "toolselect.h"))
	if err != nil {
		t.Fatal(err)
	}
	// The refusal's rule is documented as an alternation: "rule":"a"|"b"|...
	list := regexp.MustCompile(`"rule":("\w+"(?:\|\s*(?:\*\s*)?"\w+")+)`).FindSubmatch(h)
	if list == nil {
		t.Fatal(`cabi/toolselect.h lists no rules after "rule":`)
	}
	quoted := regexp.MustCompile(`"(\w+)"`).FindAllSubmatch(list[1], -1)
	for _, q := range quoted {
		if !slices.Contains(values, string(q[1])) {
			t.Errorf("cabi/toolselect.h documents the rule %q, which is not a registry.Rule value %v", q[1], values)
		}
	}
}
