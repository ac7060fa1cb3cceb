package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Limits returns the registry's limits, defaults filled in.
func (r *Registry) Limits() Limits { return r.limits }

// ClipArgs returns an argument document bounded by the limits, for echoing
// arguments that were refused (they may be arbitrarily deep or large) to
// readers with smaller limits than Go's, such as Python's json module: a
// value nested deeper than MaxArgsDepth is replaced by a string marker, and a
// document over MaxArgsBytes by an object {"omitted": "<marker>"}. raw must be
// valid JSON; anything else becomes such an object too. A document within the
// limits is returned unchanged.
func (l Limits) ClipArgs(raw json.RawMessage) json.RawMessage {
	l = l.WithDefaults()
	if len(raw) > l.MaxArgsBytes {
		return omitted(fmt.Sprintf("[omitted: %d bytes, over the limit of %d]", len(raw), l.MaxArgsBytes))
	}
	if !json.Valid(raw) {
		return omitted("[omitted: not valid JSON]")
	}
	var out bytes.Buffer
	marker, _ := json.Marshal(fmt.Sprintf("[omitted: nests deeper than %d levels]", l.MaxArgsDepth))
	depth, clipped := 0, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch c {
		case '"':
			j, _ := stringEnd(raw, i) // raw is valid JSON: no error
			out.Write(raw[i:j])
			i = j - 1
		case '{', '[':
			if depth == l.MaxArgsDepth {
				out.Write(marker)
				j, _ := valueEnd(raw, i)
				i = j - 1
				clipped = true
				continue
			}
			depth++
			out.WriteByte(c)
		case '}', ']':
			depth--
			out.WriteByte(c)
		default:
			out.WriteByte(c)
		}
	}
	if !clipped {
		return raw
	}
	return out.Bytes()
}

func omitted(msg string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"omitted": msg})
	return b
}
