package selector

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// BenchmarkSelectorOverhead measures the selector's own work for one
// selection over a 100-tool registry, without network: offering (filters),
// building both prompts with the tools' schema, parsing a 5-call reply,
// checking every call against the offered tools and validating its args.
func BenchmarkSelectorOverhead(b *testing.B) {
	reg := registry.New(nil)
	for i := range 100 {
		schema := fmt.Sprintf(`{"type":"object","properties":{"query":{"type":"string","minLength":1},"limit":{"type":"integer","minimum":1,"maximum":100},"mode":{"enum":["fast","full"]},"tags":{"type":"array","items":{"type":"string"}},"since":{"type":"string"},"until":{"type":"string"},"verbose":{"type":"boolean"},"id%d":{"type":"integer"}},"required":["query"],"additionalProperties":false}`, i)
		if err := reg.Register(registry.NewTool(fmt.Sprintf("tool_%03d", i), fmt.Sprintf("Tool number %d does a thing with a query.", i), json.RawMessage(schema))); err != nil {
			b.Fatal(err)
		}
	}
	var calls []string
	for i := range 5 {
		calls = append(calls, fmt.Sprintf(`{"tool":"tool_%03d","args":{"query":"q","limit":10,"mode":"fast","tags":["a","b"],"since":"2024-01-01","until":"2024-12-31","verbose":true,"id%d":%d},"reasoning":"step %d"}`, i*17, i*17, i, i))
	}
	reply := ChatResponse{Content: `{"calls":[` + strings.Join(calls, ",") + `]}`}
	s, err := newWith(nil, nil, quiet())
	if err != nil {
		b.Fatal(err)
	}
	req := Request{Task: Task{ID: "T", Description: "Do the thing.", SubTasks: []SubTask{{Description: "first"}, {Description: "second"}}},
		Registry: reg, Query: "thing", Context: map[string]any{"user": "u"}}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ss, err := s.Begin(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		act := ss.Feed(context.Background(), reply, nil)
		if act.Err != nil || len(act.Result.Calls) != 5 {
			b.Fatalf("%v %d", act.Err, len(act.Result.Calls))
		}
	}
}
