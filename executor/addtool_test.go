package executor

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/registry"
)

type weatherIn struct {
	City string `json:"city" jsonschema:"the city"`
	Unit string `json:"unit,omitempty" enum:"c,f"`
}

type weatherOut struct {
	Summary string `json:"summary"`
}

// AddTool infers the schema from In, refuses invalid arguments before the
// handler runs, and hands the handler the decoded value.
func TestAddToolInfersDecodesAndRefuses(t *testing.T) {
	ex := New(registry.New(nil), nil)
	var got []weatherIn
	require.NoError(t, AddTool(ex, registry.NewTool("get_weather", "Weather.", nil), func(ctx context.Context, in weatherIn) (weatherOut, error) {
		got = append(got, in)
		return weatherOut{Summary: "rain in " + in.City + " (" + in.Unit + ")"}, nil
	}))
	e, ok := ex.Registry().Lookup("get_weather")
	require.True(t, ok)
	want, err := registry.SchemaFor[weatherIn]()
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(e.Def().Parameters))

	res, err := ex.Call(context.Background(), Call{Tool: "get_weather", Args: json.RawMessage(`{"city":"Lyon","unit":"f"}`)})
	require.NoError(t, err)
	assert.Equal(t, OutcomeOK, res.Outcome)
	assert.JSONEq(t, `{"summary":"rain in Lyon (f)"}`, res.Content())
	assert.Equal(t, []weatherIn{{City: "Lyon", Unit: "f"}}, got)

	for _, args := range []string{`{"unit":"c"}`, `{"city":"Lyon","unit":"kelvin"}`, `{"city":"Lyon","City":"Paris"}`, `{"city":7}`} {
		_, err := ex.Call(context.Background(), Call{Tool: "get_weather", Args: json.RawMessage(args)})
		assert.ErrorIs(t, err, registry.ErrInvalidArgs, args)
	}
	assert.Len(t, got, 1, "the handler never saw invalid arguments")
}

// A schema given with the tool is kept byte for byte; a value it accepts
// that In cannot hold is invalid arguments with rule "decode"; a handler's
// error is the tool's own failure.
func TestAddToolExplicitSchemaAndFailures(t *testing.T) {
	ex := New(registry.New(nil), nil)
	schema := json.RawMessage(`{ "type": "object", "properties": { "n": { "type": "number" } } }`)
	require.NoError(t, AddTool(ex, registry.NewTool("count", "Count.", schema), func(ctx context.Context, in struct {
		N int `json:"n"`
	}) (int, error) {
		if in.N < 0 {
			return 0, errors.New("negative")
		}
		return in.N * 2, nil
	}))
	e, _ := ex.Registry().Lookup("count")
	assert.Equal(t, string(schema), string(e.Def().Parameters))

	res, err := ex.Call(context.Background(), Call{Tool: "count", Args: json.RawMessage(`{"n":21}`)})
	require.NoError(t, err)
	assert.Equal(t, "42", res.Content())

	_, err = ex.Call(context.Background(), Call{Tool: "count", Args: json.RawMessage(`{"n":1.5}`)})
	var ve *registry.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "decode", ve.Violations[0].Rule)
	assert.Equal(t, "/n", ve.Violations[0].Pointer)

	res, err = ex.Call(context.Background(), Call{Tool: "count", Args: json.RawMessage(`{"n":-1}`)})
	require.NoError(t, err)
	assert.Equal(t, OutcomeToolError, res.Outcome)

	assert.ErrorContains(t, AddTool[struct{}, int](ex, registry.NewTool("nil", "Nil.", nil), nil), "nil handler")
	assert.ErrorContains(t, AddTool(ex, registry.NewTool("bad", "Bad.", nil), func(context.Context, string) (int, error) { return 0, nil }),
		"must be a struct")
}

type remindIn struct {
	When  time.Time     `json:"when"`
	Every time.Duration `json:"every,omitempty"`
}

// A time the model got wrong is refused at its own pointer, by the schema
// (format date-time), before the handler runs; a duration arrives as Go's.
func TestAddToolTimesAtTheirPointer(t *testing.T) {
	ex := New(registry.New(nil), nil)
	var got []remindIn
	require.NoError(t, AddTool(ex, registry.NewTool("remind", "Set a reminder.", nil), func(ctx context.Context, in remindIn) (string, error) {
		got = append(got, in)
		return "ok", nil
	}))
	_, err := ex.Call(context.Background(), Call{Tool: "remind", Args: json.RawMessage(`{"when":"yesterday"}`)})
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	var ve *registry.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "/when", ve.Violations[0].Pointer)
	assert.Contains(t, err.Error(), "/when")
	assert.NotContains(t, err.Error(), "parsing time")
	assert.Empty(t, got)

	_, err = ex.Call(context.Background(), Call{Tool: "remind", Args: json.RawMessage(`{"when":"2026-05-01T09:00:00Z","every":"24h"}`)})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, 24*time.Hour, got[0].Every)
}
