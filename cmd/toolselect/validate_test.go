package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidate(t *testing.T) {
	cat := exampleCatalog(t)
	t.Run("valid", func(t *testing.T) {
		r := execCLI(t, nil, "", "validate", "--catalog", cat, "--tool", "get_metrics", "--args", `{"service":"checkout-api","metric":"error_rate"}`)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.JSONEq(t, `{"tool":"get_metrics","valid":true,"validated":true,"violations":[]}`, r.stdout)
		oneLine(t, r.stdout)
		assert.Empty(t, r.stderr)
	})
	t.Run("invalid", func(t *testing.T) {
		r := execCLI(t, nil, "", "validate", "--catalog", cat, "--tool", "get_metrics", "--args", `{"service":"checkout-api","metric":"errors","extra":1}`)
		require.Equal(t, exitInvalid, r.code)
		assert.Empty(t, r.stderr)
		var out validateOutput
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
		assert.False(t, out.Valid)
		require.Len(t, out.Violations, 2)
		assert.Equal(t, "", out.Violations[0].Pointer)
		assert.Equal(t, "additionalProperties", out.Violations[0].Rule)
		assert.Equal(t, "/metric", out.Violations[1].Pointer)
		assert.Equal(t, "enum", out.Violations[1].Rule)
		assert.Contains(t, out.Violations[1].Message, "error_rate")
	})
	t.Run("not JSON", func(t *testing.T) {
		r := execCLI(t, nil, "", "validate", "--catalog", cat, "--tool", "get_metrics", "--args", `{service:`)
		require.Equal(t, exitInvalid, r.code)
		assert.Contains(t, r.stdout, `"rule":"json"`)
	})
	t.Run("provider-mapped name", func(t *testing.T) {
		s := execCLI(t, nil, "", "schema", "--catalog", cat, "--format", "openai")
		var items []struct{ Function struct{ Name string } }
		require.NoError(t, json.Unmarshal([]byte(s.stdout), &items))
		mapped := items[len(items)-1].Function.Name
		r := execCLI(t, nil, "", "validate", "--catalog", cat, "--tool", mapped, "--args", `{"runbook":"flush-cache"}`)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.JSONEq(t, `{"tool":"runbook.execute","valid":true,"validated":false,"violations":[]}`, r.stdout)
	})
	t.Run("args from stdin and file", func(t *testing.T) {
		r := execCLI(t, nil, `{"status":"open"}`, "validate", "--catalog", cat, "--tool", "list_incidents", "--args", "-")
		assert.Equal(t, exitOK, r.code, r.stderr)
		f := writeTemp(t, "args.json", `{"status":"closed"}`)
		r = execCLI(t, nil, "", "validate", "--catalog", cat, "--tool", "list_incidents", "--args", "@"+f)
		assert.Equal(t, exitInvalid, r.code, r.stderr)
	})
	t.Run("a misspelt tool is answered with the nearest names", func(t *testing.T) {
		r := execCLI(t, nil, "", "validate", "--catalog", cat, "--tool", "list_incidnts", "--args", "{}")
		assert.Equal(t, exitUsage, r.code)
		assert.Contains(t, r.stderr, `unknown tool "list_incidnts" (did you mean "list_incidents"?)`)
	})
	for name, args := range map[string][]string{
		"unknown tool": {"--catalog", cat, "--tool", "nope", "--args", "{}"},
		"no tool":      {"--catalog", cat, "--args", "{}"},
		"no args":      {"--catalog", cat, "--tool", "get_metrics"},
		"no catalog":   {"--tool", "get_metrics", "--args", "{}"},
		"both stdin":   {"--catalog", "-", "--tool", "x", "--args", "-"},
		"missing file": {"--catalog", cat, "--tool", "get_metrics", "--args", "@/nonexistent"},
	} {
		t.Run(name, func(t *testing.T) {
			r := execCLI(t, nil, "", append([]string{"validate"}, args...)...)
			assert.Equal(t, exitUsage, r.code)
			assert.Empty(t, r.stdout)
			oneLine(t, r.stderr)
		})
	}
}
