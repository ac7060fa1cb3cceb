// Command faultserver runs the loopback fault-injection LLM server for tests
// in other languages (the Python suite starts it as a subprocess).
//
//	go run ./internal/faultserver/cmd [-latency 50ms]   # prints the base URL, then serves
//	go run ./internal/faultserver/cmd -faults           # prints the fault table as JSON
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
	"syscall"

	"github.com/toolselect/toolselect/internal/faultserver"
)

func main() {
	latency := flag.Duration("latency", 0, "added before every answer")
	faults := flag.Bool("faults", false, "print the fault table as JSON and exit")
	flag.Parse()
	if *faults {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(faultserver.Faults); err != nil {
			fmt.Fprintln(os.Stderr, "faultserver:", err)
			os.Exit(1)
		}
		return
	}
	s, err := faultserver.Start(faultserver.Options{Latency: *latency})
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
