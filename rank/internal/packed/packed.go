// Package packed stores a sorted table of "key\tvalue\n" lines in a fraction
// of its size and searches it without unpacking it: the keys stay plain
// text, searched in place, and the values are cut into blocks of about
// BlockSize bytes, each deflated on its own (RFC 1951, compress/flate) and
// written in Ascii85 (encoding/ascii85), one line a block, so that the
// table is text like every other file of the repository (Ascii85 costs a
// quarter more than the deflated bytes). Has and Seek read only the keys;
// Lookup inflates the one block holding its value, on the block's first
// use, and keeps it. Nothing is unpacked when a program starts.
//
// The form, all text: the header line, the length of the keys in bytes
// and the number of blocks (decimal, a line each), the keys ("key\n"
// lines), then a line per block "START END" (decimal: the offset in the
// keys of the block's first key, and the end of its line among the block
// lines that follow), then the block lines.
//
// It is the form of rank's WordNet table (rank/internal/wordnet), written by
// its gen.go with Pack. The numbers behind the form are in
// docs/packaging.md#binary-size: deflating the values alone keeps the
// membership test the index build makes of every catalog word free, where
// deflating whole lines made each index build inflate most of the table.
package packed

import (
	"bytes"
	"compress/flate"
	"encoding/ascii85"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// BlockSize is the size, in bytes of values, after which Pack starts a new
// block (a block holds whole values, so it may be a value longer).
const BlockSize = 16 << 10

// magic starts every packed table: the format and its version.
const magic = "toolselect packed table 3\n"

// Table is a packed table opened for lookups. Its methods are safe for
// concurrent use.
type Table struct {
	keys   string // "key\n" lines, sorted
	starts []int  // offset in keys of each block's first key
	ends   []int  // end of each block's deflated values in comp
	comp   string // a line of Ascii85 per block
	blocks []block
}

type block struct {
	once sync.Once
	text string
}

// Pack writes text, lines "key\tvalue\n" sorted by key bytes with no key
// repeated, as a packed table. It refuses text that is not in that form, so
// a table it wrote is one Open and the lookups can rely on.
func Pack(w io.Writer, text []byte) error {
	var keys bytes.Buffer
	var starts []int
	var blocks [][]byte
	var values bytes.Buffer
	var prev []byte
	for off := 0; off < len(text); {
		nl := bytes.IndexByte(text[off:], '\n')
		if nl < 0 {
			return fmt.Errorf("packed: the text does not end with a newline")
		}
		line := text[off : off+nl]
		key, value, ok := bytes.Cut(line, []byte{'\t'})
		if !ok || len(key) == 0 || bytes.IndexByte(value, '\t') >= 0 {
			return fmt.Errorf("packed: line %q is not key<TAB>value", line)
		}
		if prev != nil && bytes.Compare(key, prev) <= 0 {
			return fmt.Errorf("packed: key %q after %q: not sorted, or repeated", key, prev)
		}
		prev = key
		off += nl + 1
		if values.Len() == 0 {
			starts = append(starts, keys.Len())
		}
		keys.Write(key)
		keys.WriteByte('\n')
		values.Write(value)
		values.WriteByte('\n')
		if values.Len() >= BlockSize || off == len(text) {
			blocks = append(blocks, bytes.Clone(values.Bytes()))
			values.Reset()
		}
	}
	var out, index, comp bytes.Buffer
	fmt.Fprintf(&out, "%s%d\n%d\n", magic, keys.Len(), len(blocks))
	out.Write(keys.Bytes())
	for i, b := range blocks {
		var z bytes.Buffer
		zw, err := flate.NewWriter(&z, flate.BestCompression)
		if err != nil {
			return err
		}
		if _, err := zw.Write(b); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		line := make([]byte, ascii85.MaxEncodedLen(z.Len()))
		comp.Write(line[:ascii85.Encode(line, z.Bytes())])
		comp.WriteByte('\n')
		fmt.Fprintf(&index, "%d %d\n", starts[i], comp.Len())
	}
	out.Write(index.Bytes())
	out.Write(comp.Bytes())
	_, err := w.Write(out.Bytes())
	return err
}

// Open reads the index of a table Pack wrote; the values stay deflated
// until a lookup needs them.
func Open(data string) (*Table, error) {
	rest, ok := strings.CutPrefix(data, magic)
	if !ok {
		return nil, errors.New("packed: not a packed table (no header)")
	}
	errTruncated := errors.New("packed: truncated table")
	// number reads a decimal up to sep, no larger than the table.
	number := func(sep byte) (int, error) {
		end := strings.IndexByte(rest, sep)
		if end <= 0 || end > 20 {
			return 0, errTruncated
		}
		v, err := strconv.Atoi(rest[:end])
		if err != nil || v < 0 || v > len(data) {
			return 0, errTruncated
		}
		rest = rest[end+1:]
		return v, nil
	}
	k, err := number('\n')
	if err != nil {
		return nil, err
	}
	n, err := number('\n')
	if err != nil {
		return nil, err
	}
	if k > len(rest) || k > 0 && rest[k-1] != '\n' {
		return nil, errTruncated
	}
	t := &Table{keys: rest[:k]}
	rest = rest[k:]
	t.starts, t.ends, t.blocks = make([]int, n), make([]int, n), make([]block, n)
	for i := range n {
		if t.starts[i], err = number(' '); err != nil {
			return nil, err
		}
		if t.ends[i], err = number('\n'); err != nil {
			return nil, err
		}
		if t.starts[i] > k || i == 0 && t.starts[i] != 0 || i > 0 && (t.starts[i] <= t.starts[i-1] || t.ends[i] <= t.ends[i-1]) {
			return nil, fmt.Errorf("packed: index entry %d out of order", i)
		}
	}
	if n == 0 && k > 0 || n > 0 && t.ends[n-1] != len(rest) {
		return nil, errTruncated
	}
	t.comp = rest
	return t, nil
}

// MustOpen is Open for tables embedded in the program, whose form their
// package's tests check: it panics on a malformed table.
func MustOpen(data string) *Table {
	t, err := Open(data)
	if err != nil {
		panic(err)
	}
	return t
}

// Len returns the number of value blocks.
func (t *Table) Len() int { return len(t.blocks) }

// Lines returns the lines "key\tvalue\n" of block i (0 <= i < Len()), the
// values inflated: the blocks' lines, in order, are the text packed.
func (t *Table) Lines(i int) string {
	end := len(t.keys)
	if i+1 < len(t.starts) {
		end = t.starts[i+1]
	}
	keys := strings.SplitAfter(t.keys[t.starts[i]:end], "\n")
	values := strings.SplitAfter(t.values(i), "\n")
	var b strings.Builder
	for j := range len(keys) - 1 {
		b.WriteString(strings.TrimSuffix(keys[j], "\n"))
		b.WriteByte('\t')
		b.WriteString(values[j])
	}
	return b.String()
}

// values returns the values of block i, inflating them on first use.
func (t *Table) values(i int) string {
	b := &t.blocks[i]
	b.once.Do(func() {
		start := 0
		if i > 0 {
			start = t.ends[i-1]
		}
		line := strings.TrimSuffix(t.comp[start:t.ends[i]], "\n")
		text, err := io.ReadAll(flate.NewReader(ascii85.NewDecoder(strings.NewReader(line))))
		if err != nil {
			panic(fmt.Sprintf("packed: block %d: %v", i, err))
		}
		b.text = string(text)
	})
	return b.text
}

// seek is Seek, also returning the key's offset in t.keys.
func (t *Table) seek(key string) (k string, at int, ok bool) {
	lo, hi := 0, len(t.keys)
	// Binary search over byte offsets: the line holding the middle offset
	// starts after the newline before it.
	for lo < hi {
		s := lo + strings.LastIndexByte(t.keys[lo:lo+(hi-lo)/2], '\n') + 1
		if t.keys[s:s+strings.IndexByte(t.keys[s:], '\n')] < key {
			lo = s + strings.IndexByte(t.keys[s:], '\n') + 1
		} else {
			hi = s
		}
	}
	if lo == len(t.keys) {
		return "", 0, false
	}
	return t.keys[lo : lo+strings.IndexByte(t.keys[lo:], '\n')], lo, true
}

// Seek returns the first key that is key or after it (in byte order); ok
// is false when every key is before it. It inflates nothing.
func (t *Table) Seek(key string) (k string, ok bool) {
	k, _, ok = t.seek(key)
	return k, ok
}

// Has reports whether the table has key. It inflates nothing.
func (t *Table) Has(key string) bool {
	k, ok := t.Seek(key)
	return ok && k == key
}

// Lookup returns the value of key, and whether the table has it. It
// inflates the block holding the value, the first time.
func (t *Table) Lookup(key string) (string, bool) {
	k, at, ok := t.seek(key)
	if !ok || k != key {
		return "", false
	}
	// The block whose first key is at or before the key, then the key's
	// place among that block's keys is its value's among the values.
	i := sort.Search(len(t.starts), func(i int) bool { return t.starts[i] > at }) - 1
	j := strings.Count(t.keys[t.starts[i]:at], "\n")
	v := t.values(i)
	for ; j > 0; j-- {
		v = v[strings.IndexByte(v, '\n')+1:]
	}
	return v[:strings.IndexByte(v, '\n')], true
}
