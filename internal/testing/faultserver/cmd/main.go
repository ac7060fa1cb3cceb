// Command faultserver runs the loopback fault-injection LLM server for tests
// in other languages (the Python suite starts it as a subprocess).
//
//	go run ./internal/testing/faultserver/cmd [-latency 50ms]   # prints the base URL, then serves
//	go run ./internal/testing/faultserver/cmd -script FILE      # the "ok" model answers from a script (JSON array of faultserver.Reply)
//	go run ./internal/testing/faultserver/cmd -faults           # prints the fault table as JSON
//	go run ./internal/testing/faultserver/cmd -table GO.json PY.json  # the Markdown fault table from the
//	                                                    # reports the Go and Python tests wrote
//
// The first line on stdout is the "ok" base URL (http://127.0.0.1:PORT/v1);
// the fault NAME is served under http://127.0.0.1:PORT/fault/NAME/v1, or for
// the model "fault:NAME". It serves until stdin reaches EOF (so it never
// outlives the test that started it) or it receives SIGINT/SIGTERM.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/toolselect/toolselect/internal/testing/faultserver"
)

func main() {
	latency := flag.Duration("latency", 0, "added before every answer")
	faults := flag.Bool("faults", false, "print the fault table as JSON and exit")
	script := flag.String("script", "", "answer the \"ok\" requests from this `FILE` of scripted replies (a JSON array of faultserver.Reply)")
	table := flag.Bool("table", false, "print the Markdown fault table from the Go and Python reports given as arguments")
	flag.Parse()
	if *table {
		if err := markdown(os.Stdout, flag.Args()); err != nil {
			fmt.Fprintln(os.Stderr, "faultserver:", err)
			os.Exit(1)
		}
		return
	}
	if *faults {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(faultserver.Faults); err != nil {
			fmt.Fprintln(os.Stderr, "faultserver:", err)
			os.Exit(1)
		}
		return
	}
	opts := faultserver.Options{Latency: *latency}
	if *script != "" {
		var err error
		if opts.Script, err = faultserver.LoadScript(*script); err != nil {
			fmt.Fprintln(os.Stderr, "faultserver:", err)
			os.Exit(2)
		}
	}
	s, err := faultserver.Start(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultserver:", err)
		os.Exit(1)
	}
	fmt.Println(s.URL)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	select {
	case <-stop:
	case <-eof:
	}
	s.Close()
}

// markdown writes the fault table: one row per fault and mode, with the Go
// outcome and the Python outcomes (built-in transport, caller's client).
func markdown(w io.Writer, files []string) error {
	goRows := map[string]string{}
	pyRows := map[string]map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var doc struct {
			Go map[string]string            `json:"faults_go"`
			Py map[string]map[string]string `json:"faults_py"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: %v", f, err)
		}
		for k, v := range doc.Go {
			goRows[k] = v
		}
		for k, v := range doc.Py {
			pyRows[k] = v
		}
	}
	cell := func(s string) string {
		if s == "" {
			return "—"
		}
		return strings.ReplaceAll(s, "|", "\\|")
	}
	fmt.Fprintln(w, "| fault | the server | mode | Go API | Python, `client=None` | Python, own client |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, f := range faultserver.Faults {
		for _, mode := range []string{"json", "native"} {
			key := f.Name + "/" + mode
			g, p := goRows[key], pyRows[key]
			if g == "" && p == nil {
				continue
			}
			fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s | %s |\n", f.Name, cell(f.Does), mode, cell(g), cell(p["http"]), cell(p["session"]))
		}
	}
	return nil
}
