package feedbackstore

import "github.com/toolselect/toolselect/internal/jsonscan"

// parsePlain decodes the common shape of a stored record without
// encoding/json: one object whose keys are exactly "query", "tools" and
// "remove" (each at most once), whose strings hold no control character, only
// valid UTF-8 and no surrogate escape, and whose "remove" is a literal boolean.
// Anything else (a surrogate escape, another key, a case variant, a duplicate, a
// syntax error) returns ok=false and the caller decodes the line with
// encoding/json, which gives the same record for every line accepted here and
// the exact error for the rest. Loading a store is mostly this decoding, and
// the records the library writes are of this shape.
func parsePlain(b []byte) (r Record, ok bool) {
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return r, false
	}
	i = jsonscan.SkipSpace(b, i+1)
	var seen [3]bool
	if i < len(b) && b[i] == '}' {
		return r, jsonscan.SkipSpace(b, i+1) == len(b)
	}
	for {
		key, j, good := jsonscan.String(b, i)
		if !good {
			return r, false
		}
		i = jsonscan.SkipSpace(b, j)
		if i >= len(b) || b[i] != ':' {
			return r, false
		}
		i = jsonscan.SkipSpace(b, i+1)
		switch key {
		case "query":
			if seen[0] {
				return r, false
			}
			seen[0] = true
			if r.Query, i, good = jsonscan.String(b, i); !good {
				return r, false
			}
		case "tools":
			if seen[1] {
				return r, false
			}
			seen[1] = true
			if r.Tools, i, good = jsonscan.Strings(b, i); !good {
				return r, false
			}
		case "remove":
			if seen[2] {
				return r, false
			}
			seen[2] = true
			switch {
			case hasWord(b, i, "true"):
				r.Remove, i = true, i+4
			case hasWord(b, i, "false"):
				r.Remove, i = false, i+5
			default:
				return r, false
			}
		default:
			return r, false
		}
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) {
			return r, false
		}
		switch b[i] {
		case ',':
			i = jsonscan.SkipSpace(b, i+1)
		case '}':
			return r, jsonscan.SkipSpace(b, i+1) == len(b)
		default:
			return r, false
		}
	}
}

func hasWord(b []byte, i int, w string) bool {
	return len(b)-i >= len(w) && string(b[i:i+len(w)]) == w
}
