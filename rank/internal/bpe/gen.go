//go:build ignore

// gen writes the vocabularies of package bpe from tiktoken-go's codecs (the
// module go.mod pins), run by hand when that module is updated:
//
//	go run gen.go
//
// Each file is the encoding's tokens in rank order, each as a uvarint byte
// length followed by the token's bytes; a rank with no token is length 0.
// tiktoken-go stores the same vocabularies as Go map literals, which cost
// the command 9.4 MB; this form is 2.3 MB (both files) and parsed once at first use.
package main

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/tiktoken-go/tokenizer/codec"
)

func main() {
	for _, c := range []*codec.Codec{codec.NewO200kBase(), codec.NewCl100kBase()} {
		var out []byte
		tokens, gap := 0, 0
		for id := uint(0); gap < 4096; id++ {
			s, err := c.Decode([]uint{id})
			if err != nil {
				gap++
				continue
			}
			for ; gap > 0; gap-- {
				out = append(out, 0)
			}
			out = binary.AppendUvarint(out, uint64(len(s)))
			out = append(out, s...)
			tokens++
		}
		name := c.GetName() + ".bpe"
		if err := os.WriteFile(name, out, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%s: %d tokens, %d bytes\n", name, tokens, len(out))
	}
}
