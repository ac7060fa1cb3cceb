package rank

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// inputText normalises a ranking input to text. A string is used as is; a
// []byte or json.RawMessage holding JSON is decoded first (other bytes are
// read as text); any other value is walked as JSON would see it: strings and
// numbers are kept, object keys are kept too (a key such as "city" says what
// its value is about), in a stable order (sorted keys).
func inputText(input any) string {
	switch v := input.(type) {
	case nil:
		return ""
	case string:
		return v
	case fmt.Stringer:
		return v.String()
	case json.RawMessage:
		return rawText(v)
	case []byte:
		return rawText(v)
	}
	// Round-trip through JSON so structs, maps and slices of any type are
	// seen the way a JSON encoder sees them (tags, omitempty...).
	b, err := json.Marshal(input)
	if err != nil {
		return fmt.Sprint(input)
	}
	return rawText(b)
}

func rawText(b []byte) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return string(b)
	}
	var sb strings.Builder
	writeValue(&sb, v)
	return strings.TrimSpace(sb.String())
}

func writeValue(sb *strings.Builder, v any) {
	switch x := v.(type) {
	case string:
		sb.WriteString(x)
		sb.WriteByte(' ')
	case json.Number:
		sb.WriteString(x.String())
		sb.WriteByte(' ')
	case bool:
		if x {
			sb.WriteString("true ")
		} else {
			sb.WriteString("false ")
		}
	case []any:
		for _, e := range x {
			writeValue(sb, e)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sb.WriteString(k)
			sb.WriteByte(' ')
			writeValue(sb, x[k])
		}
	}
}
