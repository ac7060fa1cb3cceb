// Command testreport is the bookkeeping behind `make test` (tests/run.sh): it
// turns each step's results into one small file and ends the run with a
// summary of what ran, what failed and what was skipped and why, so a skip
// cannot hide behind "ok".
//
//	go test -json ./... | testreport gotest -step go -dir DIR   # progress on stdout, DIR/go.tsv
//	testreport summary -dir DIR                                  # the closing table and line
//
// A step file is tab-separated lines: "count PASSED FAILED SKIPPED",
// "time SECONDS", "skip NAME REASON", "fail NAME", "note TEXT". Steps that
// are not Go tests (Python, fuzzing) write the same lines themselves.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testreport gotest -step NAME -dir DIR | summary -dir DIR")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	step := fs.String("step", "go", "step name (the file DIR/NAME.tsv)")
	dir := fs.String("dir", "", "report directory")
	fs.Parse(os.Args[2:])
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "testreport: -dir is required")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "gotest":
		r, err := readGoTest(os.Stdin, os.Stdout)
		if err == nil {
			err = r.write(filepath.Join(*dir, *step+".tsv"))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			os.Exit(2)
		}
		if r.Failed > 0 {
			os.Exit(1)
		}
	case "summary":
		failed, err := summary(os.Stdout, *dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			os.Exit(2)
		}
		if failed {
			os.Exit(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "testreport: unknown mode %q\n", os.Args[1])
		os.Exit(2)
	}
}

// result is one step's outcome.
type result struct {
	Passed, Failed, Skipped int
	Seconds                 float64
	Skips                   [][2]string // name, reason
	Fails                   []string
	Notes                   []string
}

func (r *result) write(path string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "count\t%d\t%d\t%d\n", r.Passed, r.Failed, r.Skipped)
	if r.Seconds > 0 {
		fmt.Fprintf(&b, "time\t%.1f\n", r.Seconds)
	}
	for _, s := range r.Skips {
		fmt.Fprintf(&b, "skip\t%s\t%s\n", s[0], oneLine(s[1]))
	}
	for _, f := range r.Fails {
		fmt.Fprintf(&b, "fail\t%s\n", f)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note\t%s\n", oneLine(n))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// event is one line of `go test -json` (test2json).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// readGoTest counts the test events of a `go test -json` stream and prints
// progress for people: one line per package as it finishes, and the output
// of every failing test or package.
func readGoTest(in io.Reader, out io.Writer) (*result, error) {
	r := &result{}
	type key struct{ pkg, test string }
	output := map[key][]string{}
	pkgTests := map[string][3]int{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var first, last time.Time
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintln(out, string(line)) // not test2json: a build error or similar, shown as is
			continue
		}
		if first.IsZero() {
			first = e.Time
		}
		last = e.Time
		k := key{e.Package, e.Test}
		switch e.Action {
		case "output", "build-output":
			output[k] = append(output[k], e.Output)
			continue
		case "build-fail":
			r.Failed++
			r.Fails = append(r.Fails, e.Package+" [build failed]")
			fmt.Fprint(out, strings.Join(output[k], ""))
			continue
		case "pass", "fail", "skip":
		default:
			continue
		}
		c := pkgTests[e.Package]
		if e.Test == "" { // the package is done
			switch e.Action {
			case "fail":
				if c[1] == 0 { // failed without a failing test: build error, panic in init, timeout
					r.Failed++
					r.Fails = append(r.Fails, e.Package)
				}
				fmt.Fprint(out, strings.Join(output[k], ""))
			case "pass":
				fmt.Fprintf(out, "ok    %-52s %6.1fs  %4d passed", e.Package, e.Elapsed, c[0])
				if c[2] > 0 {
					fmt.Fprintf(out, ", %d skipped", c[2])
				}
				fmt.Fprintln(out)
			case "skip":
				fmt.Fprintf(out, "--    %-52s (no test files)\n", e.Package)
			}
			delete(output, k)
			continue
		}
		switch e.Action {
		case "pass":
			r.Passed++
			c[0]++
		case "fail":
			r.Failed++
			c[1]++
			r.Fails = append(r.Fails, e.Package+" "+e.Test)
			fmt.Fprintf(out, "--- FAIL: %s %s\n%s", e.Package, e.Test, strings.Join(output[k], ""))
		case "skip":
			r.Skipped++
			c[2]++
			r.Skips = append(r.Skips, [2]string{e.Package + " " + e.Test, skipReason(output[k])})
		}
		pkgTests[e.Package] = c
		delete(output, k)
	}
	if !first.IsZero() {
		r.Seconds = last.Sub(first).Seconds()
	}
	return r, sc.Err()
}

// skipReason is the message a test gave t.Skip: the last output line that is
// not the "--- SKIP" line or a "=== " marker, without its file:line prefix.
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "=== ") {
			continue
		}
		if f, rest, ok := strings.Cut(l, ": "); ok && strings.Contains(f, ".go:") && !strings.ContainsAny(f, " ") {
			l = rest
		}
		return l
	}
	return "no reason given"
}

// readResult parses a step file.
func readResult(path string) (*result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &result{}
	for n, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		f := strings.Split(line, "\t")
		bad := fmt.Errorf("%s:%d: malformed line %q", path, n+1, line)
		switch {
		case f[0] == "count" && len(f) == 4:
			var nums [3]int
			for i := range nums {
				if nums[i], err = strconv.Atoi(f[i+1]); err != nil {
					return nil, bad
				}
			}
			r.Passed, r.Failed, r.Skipped = nums[0], nums[1], nums[2]
		case f[0] == "time" && len(f) == 2:
			if r.Seconds, err = strconv.ParseFloat(f[1], 64); err != nil {
				return nil, bad
			}
		case f[0] == "skip" && len(f) == 3:
			r.Skips = append(r.Skips, [2]string{f[1], f[2]})
		case f[0] == "fail" && len(f) == 2:
			r.Fails = append(r.Fails, f[1])
		case f[0] == "note" && len(f) == 2:
			r.Notes = append(r.Notes, f[1])
		case line == "":
		default:
			return nil, bad
		}
	}
	return r, nil
}

// summary prints every step of dir (in the order of DIR/steps, one name a
// line, as the runner started them) and the closing line. A step that was
// started but left no file counts as one failure: it died before reporting.
func summary(w io.Writer, dir string) (failed bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, "steps"))
	if err != nil {
		return false, err
	}
	var tp, tf, ts int
	var skips, fails, notes []string
	fmt.Fprintln(w, "\n== make test: summary ==")
	fmt.Fprintf(w, "%-34s %7s %7s %8s %8s\n", "step", "passed", "failed", "skipped", "time")
	for _, step := range strings.Fields(string(b)) {
		r, err := readResult(filepath.Join(dir, step+".tsv"))
		if os.IsNotExist(err) {
			r = &result{Failed: 1, Fails: []string{step + ": the step ended without reporting"}}
		} else if err != nil {
			return false, err
		}
		label := step
		if d, err := os.ReadFile(filepath.Join(dir, step+".label")); err == nil {
			label = strings.TrimSpace(string(d))
		}
		fmt.Fprintf(w, "%-34s %7d %7d %8d %7.0fs\n", label, r.Passed, r.Failed, r.Skipped, r.Seconds)
		tp, tf, ts = tp+r.Passed, tf+r.Failed, ts+r.Skipped
		for _, s := range r.Skips {
			skips = append(skips, fmt.Sprintf("  %s: %s: %s", step, s[0], s[1]))
		}
		for _, f := range r.Fails {
			fails = append(fails, fmt.Sprintf("  %s: %s", step, f))
		}
		for _, n := range r.Notes {
			notes = append(notes, fmt.Sprintf("  %s: %s", step, n))
		}
	}
	sort.Strings(skips)
	section := func(title string, lines []string) {
		if len(lines) > 0 {
			fmt.Fprintf(w, "%s:\n%s\n", title, strings.Join(lines, "\n"))
		}
	}
	section("notes", notes)
	section("skipped (with the reason each test gave)", skips)
	section("FAILED", fails)
	// The closing line, in the plain form test reports end with.
	fmt.Fprintf(w, "total: %d passed, %d failed, %d skipped\n", tp, tf, ts)
	return tf > 0, nil
}
