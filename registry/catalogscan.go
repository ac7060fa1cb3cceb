package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"unicode/utf8"
)

// span is where one JSON value lies in a catalog: data[start:end].
type span struct{ start, end int }

// The catalog scanner finds where values start and end in one pass, without
// decoding them: strings (with their escapes) are skipped, brackets counted.
// It does not check what lies inside a value; decoding each tool does, and a
// syntax error found there is placed by its offset. Errors name the line and
// column, counted only when there is an error to report.

// position returns the 1-based line and column (in characters) of data[off].
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	line = 1 + bytes.Count(data[:off], []byte{'\n'})
	lineStart := bytes.LastIndexByte(data[:off], '\n') + 1
	return line, 1 + utf8.RuneCount(data[lineStart:off])
}

// syntaxAt is a catalog error placed at data[off].
func syntaxAt(data []byte, off int, msg string) error {
	line, col := position(data, off)
	return fmt.Errorf("catalog line %d, column %d: %s", line, col, msg)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

// valueEnd returns the end of the JSON value starting at data[i] (i is not
// white space and is inside data).
func valueEnd(data []byte, i int) (int, error) {
	switch c := data[i]; c {
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				k, err := stringEnd(data, j)
				if err != nil {
					return 0, err
				}
				j = k - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, syntaxAt(data, len(data), fmt.Sprintf("invalid JSON: unexpected end of the catalog: the %s opened at %s is not closed", map[byte]string{'{': "object", '[': "array"}[c], lineCol(data, i)))
	case '"':
		return stringEnd(data, i)
	case '}', ']', ',', ':':
		return 0, syntaxAt(data, i, fmt.Sprintf("invalid JSON: unexpected %q", c))
	}
	j := i
	for j < len(data) && !isSpace(data[j]) && bytes.IndexByte([]byte(`{}[],:"`), data[j]) < 0 {
		j++
	}
	return j, nil
}

func lineCol(data []byte, off int) string {
	line, col := position(data, off)
	return fmt.Sprintf("line %d, column %d", line, col)
}

// stringEnd returns the end of the JSON string starting at data[i] == '"'.
func stringEnd(data []byte, i int) (int, error) {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		case '\n':
			return 0, syntaxAt(data, j, fmt.Sprintf("invalid JSON: the string opened at %s is not closed on its line", lineCol(data, i)))
		}
	}
	return 0, syntaxAt(data, len(data), fmt.Sprintf("invalid JSON: unexpected end of the catalog: the string opened at %s is not closed", lineCol(data, i)))
}

// splitArray returns the items of the JSON array starting at data[start] ==
// '[' and the offset just after its ']'.
func splitArray(data []byte, start int) ([]span, int, error) {
	var items []span
	i := skipSpace(data, start+1)
	if i < len(data) && data[i] == ']' {
		return items, i + 1, nil
	}
	for {
		if i == len(data) {
			return nil, 0, syntaxAt(data, i, fmt.Sprintf("invalid JSON: unexpected end of the catalog: the array opened at %s is not closed", lineCol(data, start)))
		}
		end, err := valueEnd(data, i)
		if err != nil {
			return nil, 0, err
		}
		items = append(items, span{i, end})
		i = skipSpace(data, end)
		if i == len(data) {
			continue
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case ']':
			return items, i + 1, nil
		default:
			return nil, 0, syntaxAt(data, i, fmt.Sprintf("invalid JSON: want ',' or ']' after array item #%d, got %q", len(items)-1, data[i]))
		}
	}
}

// splitValues returns the values of a stream of JSON values (JSON Lines or
// concatenated objects) starting at data[start].
func splitValues(data []byte, start int) ([]span, error) {
	var out []span
	for i := start; i < len(data); i = skipSpace(data, i) {
		end, err := valueEnd(data, i)
		if err != nil {
			return nil, err
		}
		out = append(out, span{i, end})
		i = end
	}
	return out, nil
}

// objectMembers returns where each member's value of the object at obj lies.
// It reads only the top level; a malformed object is an error.
func objectMembers(data []byte, obj span) (map[string]span, error) {
	out := map[string]span{}
	if data[obj.start] != '{' {
		return nil, fmt.Errorf("not an object")
	}
	i := skipSpace(data, obj.start+1)
	if i < obj.end && data[i] == '}' {
		return out, nil
	}
	for i < obj.end {
		if data[i] != '"' {
			return nil, fmt.Errorf("not an object")
		}
		kend, err := stringEnd(data, i)
		if err != nil {
			return nil, err
		}
		var key string
		if err := json.Unmarshal(data[i:kend], &key); err != nil {
			return nil, err
		}
		i = skipSpace(data, kend)
		if i >= obj.end || data[i] != ':' {
			return nil, fmt.Errorf("not an object")
		}
		i = skipSpace(data, i+1)
		if i >= obj.end {
			return nil, fmt.Errorf("not an object")
		}
		vend, err := valueEnd(data, i)
		if err != nil {
			return nil, err
		}
		out[key] = span{i, vend}
		i = skipSpace(data, vend)
		if i < obj.end && data[i] == ',' {
			i = skipSpace(data, i+1)
			continue
		}
		if i < obj.end && data[i] == '}' {
			return out, nil
		}
		return nil, fmt.Errorf("not an object")
	}
	return nil, fmt.Errorf("not an object")
}

// parallel runs f(0..n-1) over the cores, in chunks of at least minChunk
// indexes; small n runs on the calling goroutine.
func parallel(n, minChunk int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/minChunk)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var next int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				lo := int(next)
				next += int64(minChunk)
				mu.Unlock()
				if lo >= n {
					return
				}
				for i := lo; i < min(lo+minChunk, n); i++ {
					f(i)
				}
			}
		}()
	}
	wg.Wait()
}

// compactValid returns valid JSON without its insignificant white space, or
// nil when there is none to remove. It does not check the JSON.
func compactValid(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case isSpace(c):
			if out == nil {
				out = make([]byte, 0, len(b))
			}
			out = append(out, b[last:i]...)
			last = i + 1
		}
	}
	if out == nil {
		return nil
	}
	return append(out, b[last:]...)
}
