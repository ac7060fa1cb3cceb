package layers

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

var (
	fence      = regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```")
	inlineCode = regexp.MustCompile("`([^`\n]+)`")
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading    = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	makeCmd    = regexp.MustCompile(`(?:^|[\s;&|(])make ([a-z][a-z0-9-]*)`)
	cliCmd     = regexp.MustCompile(`(?:^|[\s;&|(/])toolselect ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?(?: ([a-z][a-z-]*))?`)
	goRun      = regexp.MustCompile(`go run (\./[^\s]+)`)
	scriptCmd  = regexp.MustCompile(`(?:python3|bash) ([\w./-]+\.(?:py|sh))`)
	makeTarget = regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):`)
)

// TestReadmeLinksResolve: every relative link of the README and of docs/
// names a file of the repository, and its #anchor a heading of that file.
func TestReadmeLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, doc := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		text := fence.ReplaceAllString(readText(t, doc), "")
		text = inlineCode.ReplaceAllString(text, "")
		name, _ := filepath.Rel(root, doc)
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue // the network is not part of the test
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := doc
			if path != "" {
				file = filepath.Join(filepath.Dir(doc), path)
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s: the link %s names no file of the repository", name, target)
					continue
				}
			}
			if anchor != "" && !anchors(t, file)[anchor] {
				t.Errorf("%s: the link %s names no heading of %s", name, target, path)
			}
		}
	}
}

// TestReadmeCommandsExist: every command the README shows (in its shell
// blocks and inline code) exists: `make X` is a Makefile target, `toolselect
// X [Y]` a subcommand that answers --help, `go run ./X` a folder, and the
// scripts run with python3 or bash files.
func TestReadmeCommandsExist(t *testing.T) {
	root := filepath.Join("..", "..")
	readme := readText(t, filepath.Join(root, "README.md"))
	var code []string
	for _, m := range fence.FindAllStringSubmatch(readme, -1) {
		if m[1] == "sh" || m[1] == "bash" || m[1] == "" {
			code = append(code, m[2])
		}
	}
	for _, m := range inlineCode.FindAllStringSubmatch(fence.ReplaceAllString(readme, ""), -1) {
		code = append(code, m[1])
	}
	targets := map[string]bool{}
	for _, m := range makeTarget.FindAllStringSubmatch(readText(t, filepath.Join(root, "Makefile")), -1) {
		targets[m[1]] = true
	}
	bin := filepath.Join(t.TempDir(), "toolselect")
	build := exec.Command("go", "build", "-o", bin, "./cmd/toolselect")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/toolselect: %v\n%s", err, out)
	}
	checked := map[string]bool{}
	count := 0
	for _, c := range code {
		for _, m := range makeCmd.FindAllStringSubmatch(c, -1) {
			count++
			if !targets[m[1]] {
				t.Errorf("README: `make %s` is not a target of the Makefile", m[1])
			}
		}
		for _, m := range cliCmd.FindAllStringSubmatch(c, -1) {
			count++
			args := []string{m[1]}
			if m[1] == "mcp" && (m[2] == "stats" || m[2] == "pins") {
				args = append(args, m[2]) // mcp's own subcommands
				if m[2] == "pins" && m[3] != "" {
					args = append(args, m[3]) // and pins' own: approve, list
				}
			}
			key := strings.Join(args, " ")
			if checked[key] {
				continue
			}
			checked[key] = true
			if out, err := exec.Command(bin, append(args, "--help")...).CombinedOutput(); err != nil {
				t.Errorf("README: `toolselect %s --help`: %v\n%s", key, err, out)
			}
		}
		for _, m := range goRun.FindAllStringSubmatch(c, -1) {
			count++
			if fi, err := os.Stat(filepath.Join(root, m[1])); err != nil || !fi.IsDir() {
				t.Errorf("README: `go run %s` names no package folder", m[1])
			}
		}
		for _, m := range scriptCmd.FindAllStringSubmatch(c, -1) {
			count++
			if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
				t.Errorf("README: %s is not a file of the repository", m[1])
			}
		}
	}
	if !checked["select"] && !checked["mcp"] || !strings.Contains(readme, "make demo") || !strings.Contains(readme, "make test") || count < 10 {
		t.Fatalf("found %d commands in the README; has its shape changed?", count)
	}
}

// anchors lists the anchors GitHub gives the headings of a Markdown file.
func anchors(t *testing.T, file string) map[string]bool {
	out := map[string]bool{}
	text := fence.ReplaceAllString(readText(t, file), "")
	for _, m := range heading.FindAllStringSubmatch(text, -1) {
		out[slug(m[1])] = true
	}
	return out
}

// slug is GitHub's anchor of a heading: lower case, letters, digits, '-'
// and '_' kept, spaces turned to '-', everything else dropped.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
