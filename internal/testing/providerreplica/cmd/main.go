// Command providerreplica serves one testdata/providers case on 127.0.0.1
// for tests in other languages: it prints the base URL on the first line,
// then, when its standard input closes, the request bodies it received as
// one JSON array, and exits.
//
//	go run ./internal/testing/providerreplica/cmd testdata/providers/CASE.json
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/toolselect/toolselect/internal/testing/providerreplica"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: providerreplica CASE.json")
		os.Exit(2)
	}
	c, err := providerreplica.LoadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	s, err := c.Serve()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(s.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
	s.Close()
	reqs := s.Requests()
	if reqs == nil {
		reqs = []map[string]any{} // none arrived: [], not null
	}
	b, _ := json.Marshal(reqs)
	fmt.Println(string(b))
}
