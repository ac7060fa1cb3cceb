package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/registry"
)

func TestSchemaFormats(t *testing.T) {
	cat := exampleCatalog(t)
	tools, _, err := registry.LoadCatalogFile(cat)
	require.NoError(t, err)
	for _, f := range registry.Formats() {
		t.Run(string(f), func(t *testing.T) {
			r := execCLI(t, nil, "", "schema", "--catalog", cat, "--format", string(f))
			require.Equal(t, exitOK, r.code, r.stderr)
			assert.Empty(t, r.stderr)
			oneLine(t, r.stdout)
			var items []map[string]any
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &items))
			assert.Len(t, items, len(tools))
			// Every view reads back as the same catalog.
			back, _, err := registry.ParseCatalog([]byte(r.stdout))
			require.NoError(t, err)
			require.Len(t, back, len(tools))
			for i := range tools {
				assert.JSONEq(t, string(schemaOrEmpty(tools[i])), string(schemaOrEmpty(back[i])), "tool %s", tools[i].Name)
			}
		})
	}
}

func schemaOrEmpty(t registry.Tool) json.RawMessage {
	if !t.HasSchema() {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return t.Parameters
}

func TestSchemaShapes(t *testing.T) {
	cat := exampleCatalog(t)
	r := execCLI(t, nil, "", "schema", "--catalog", cat, "--format", "openai")
	require.Equal(t, exitOK, r.code)
	assert.True(t, strings.HasPrefix(r.stdout, `[{"type":"function","function":{"name":"search_logs"`), r.stdout[:80])
	// A name OpenAI forbids is mapped, and stays resolvable.
	assert.NotContains(t, r.stdout, `"runbook.execute"`)
	assert.Contains(t, r.stdout, `"runbook_execute"`)

	r = execCLI(t, nil, "", "schema", "--catalog", cat, "--format", "mcp")
	require.Equal(t, exitOK, r.code)
	assert.Contains(t, r.stdout, `"inputSchema"`)
	assert.Contains(t, r.stdout, `"destructiveHint":true`)

	r = execCLI(t, nil, "", "schema", "--catalog", cat, "--format", "schema", "--indent")
	require.Equal(t, exitOK, r.code)
	assert.Contains(t, r.stdout, "\n  {\n    \"name\": \"search_logs\"")
}

func TestSchemaStdin(t *testing.T) {
	r := execCLI(t, nil, `{"name":"a","description":"A","parameters":{"type":"object"}}`, "schema", "--catalog", "-", "--format", "anthropic")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.JSONEq(t, `[{"name":"a","description":"A","input_schema":{"type":"object"}}]`, r.stdout)
}

func TestSchemaErrors(t *testing.T) {
	cat := exampleCatalog(t)
	bad := writeTemp(t, "bad.json", `[{"name":"a","description":"no schema"},{"name":"b","parameters":{"$ref":"http://x/y.json"}}]`)
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no catalog":     {[]string{"schema"}, "--catalog is required"},
		"bad format":     {[]string{"schema", "--catalog", cat, "--format", "gemini"}, `unknown format "gemini"`},
		"missing file":   {[]string{"schema", "--catalog", "/nonexistent/x.json"}, "no such file"},
		"refused tools":  {[]string{"schema", "--catalog", bad}, `tool #0 "a"`},
		"unknown flag":   {[]string{"schema", "--nope"}, "flag provided but not defined"},
		"stray argument": {[]string{"schema", "--catalog", cat, "extra"}, `unexpected argument "extra"`},
	} {
		t.Run(name, func(t *testing.T) {
			r := execCLI(t, nil, "", tc.args...)
			assert.Equal(t, exitUsage, r.code)
			assert.Empty(t, r.stdout)
			oneLine(t, r.stderr)
			assert.Contains(t, r.stderr, tc.want)
			assert.True(t, strings.HasPrefix(r.stderr, "toolselect schema: "), r.stderr)
		})
	}
	r := execCLI(t, nil, "", "schema", "--catalog", bad)
	assert.Contains(t, r.stderr, `tool #1 "b"`, "every refused tool is named")
}

func TestHelpEverywhere(t *testing.T) {
	for _, name := range []string{"select", "schema", "validate"} {
		for _, flag := range []string{"--help", "-h"} {
			r := execCLI(t, nil, "", name, flag)
			assert.Equal(t, exitOK, r.code, "%s %s", name, flag)
			assert.Contains(t, r.stdout, "usage: toolselect "+name)
			assert.Empty(t, r.stderr)
		}
	}
	r := execCLI(t, nil, "", "help")
	assert.Equal(t, exitOK, r.code)
	for _, name := range []string{"select", "schema", "validate"} {
		assert.Contains(t, r.stdout, "  "+name+" ")
	}
}

// The shipped example catalog keeps what the demo and the docs rely on.
func TestExampleCatalog(t *testing.T) {
	var stderr strings.Builder
	reg, _, ok := loadCatalog(&cmdEnv{stderr: &stderr}, "test", exampleCatalog(t), true)
	require.True(t, ok, stderr.String())
	var unsafe, roles, noSchemaRO, approval int
	for _, e := range reg.Entries() {
		d := e.Def()
		if !d.Safe {
			unsafe++
		}
		if len(d.Roles) > 0 {
			roles++
		}
		if d.AllowNoSchema && d.NoSchemaMode == registry.NoSchemaReadOnly && d.ReadOnly() {
			noSchemaRO++
		}
		if d.NoSchemaMode == registry.NoSchemaHumanApproval {
			approval++
		}
	}
	assert.GreaterOrEqual(t, reg.Len(), 12)
	assert.Positive(t, unsafe, "an unsafe tool")
	assert.Positive(t, roles, "a tool with roles")
	assert.Positive(t, noSchemaRO, "an allowNoSchema read-only tool")
	assert.Positive(t, approval, "a human-approval tool")

	ctx, err := readContext(&cmdEnv{}, "../../examples/context.json")
	require.NoError(t, err)
	assert.Equal(t, "checkout-api", ctx["service"])
}
