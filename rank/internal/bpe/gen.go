//go:build ignore

// gen writes the vocabularies of package bpe from tiktoken-go's codecs (the
// module go.mod pins), run by hand when that module is updated:
//
//	go run gen.go
//
// Each file is text: the encoding's tokens in rank order, one a line, an
// empty line for a rank with no token. A token's bytes are written as they
// are (printable ASCII, and whole UTF-8 characters other than C1 controls
// and line separators), but for '\\' as \\\\ and any other byte as \\xHH:
// all but a few thousand tokens read as themselves, and load slices them
// from the embedded text without decoding. tiktoken-go stores the same
// vocabularies as Go map literals, which cost the command 9.4 MB; this form
// is 2.4 MB (both files) and read once at first use.
package main

import (
	"fmt"
	"os"
	"unicode/utf8"

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
				out = append(out, '\n')
			}
			out = appendToken(out, s)
			out = append(out, '\n')
			tokens++
		}
		name := c.GetName() + ".txt"
		if err := os.WriteFile(name, out, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%s: %d tokens, %d bytes\n", name, tokens, len(out))
	}
}

// appendToken writes a token's bytes as a line of the file (see above).
func appendToken(out []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch r, n := utf8.DecodeRuneInString(s[i:]); {
		case c == '\\':
			out = append(out, '\\', '\\')
		case c >= 0x20 && c <= 0x7e:
			out = append(out, c)
		case c >= 0x80 && (r != utf8.RuneError || n > 1) && !(r >= 0x80 && r <= 0x9f) && r != 0x2028 && r != 0x2029 && r != 0xfeff:
			out = append(out, s[i:i+n]...)
			i += n
			continue
		default:
			out = fmt.Appendf(out, "\\x%02x", c)
		}
		i++
	}
	return out
}
