package registry_test

import (
	"encoding/json"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/registry"
)

// maintenanceArgs holds each type SchemaFor writes as a formatted string,
// bare, behind a pointer, in a slice and in a nested struct.
type maintenanceArgs struct {
	When    time.Time       `json:"when" jsonschema:"when the window opens"`
	For     time.Duration   `json:"for"`
	Host    netip.Addr      `json:"host"`
	Subnet  *netip.Prefix   `json:"subnet,omitempty"`
	Listen  netip.AddrPort  `json:"listen,omitempty"`
	Runbook url.URL         `json:"runbook,omitempty"`
	Pauses  []time.Duration `json:"pauses,omitempty"`
	Notify  struct {
		At *time.Time `json:"at,omitempty"`
	} `json:"notify,omitzero"`
}

func maintenanceEntry(t *testing.T) *registry.Entry {
	t.Helper()
	schema, err := registry.SchemaFor[maintenanceArgs]()
	require.NoError(t, err)
	r := registry.New(nil)
	require.NoError(t, r.Register(registry.NewTool("schedule_maintenance", "Schedule a window.", schema)))
	e, _ := r.Lookup("schedule_maintenance")
	return e
}

// TestSchemaForTextTypesGolden compares the schema of times, durations,
// addresses and URLs with testdata/schemafor/maintenance.json (-update
// rewrites it).
func TestSchemaForTextTypesGolden(t *testing.T) {
	schema, err := registry.SchemaFor[maintenanceArgs]()
	require.NoError(t, err)
	assertSchemaGolden(t, "maintenance.json", schema)
}

// The formats SchemaFor writes are asserted by the validator (before any
// decoding), each at its own pointer; what passes decodes into the Go
// values, durations and URLs included.
func TestSchemaForFormatsAreChecked(t *testing.T) {
	e := maintenanceEntry(t)
	good := `{"when":"2026-03-01T22:00:00Z","for":"1h30m","host":"10.0.0.7","subnet":"10.0.0.0/24",
		"listen":"[::1]:8080","runbook":"https://wiki.example/runbooks/db","pauses":["90s","-1.5h"],"notify":{"at":"2026-03-01T21:00:00+01:00"}}`
	var in maintenanceArgs
	require.NoError(t, e.DecodeArgs([]byte(good), &in))
	assert.Equal(t, time.Date(2026, 3, 1, 22, 0, 0, 0, time.UTC), in.When)
	assert.Equal(t, 90*time.Minute, in.For)
	assert.Equal(t, netip.MustParseAddr("10.0.0.7"), in.Host)
	assert.Equal(t, netip.MustParsePrefix("10.0.0.0/24"), *in.Subnet)
	assert.Equal(t, netip.MustParseAddrPort("[::1]:8080"), in.Listen)
	assert.Equal(t, "wiki.example", in.Runbook.Host)
	assert.Equal(t, "/runbooks/db", in.Runbook.Path)
	assert.Equal(t, []time.Duration{90 * time.Second, -90 * time.Minute}, in.Pauses)
	require.NotNil(t, in.Notify.At)
	assert.True(t, in.Notify.At.Equal(time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)))

	for args, pointer := range map[string]string{
		`{"when":"yesterday","for":"1h","host":"10.0.0.7"}`:                                    "/when",
		`{"when":"2026-03-01T22:00:00Z","for":"an hour","host":"10.0.0.7"}`:                    "/for",
		`{"when":"2026-03-01T22:00:00Z","for":"1h","host":"10.0.0.300"}`:                       "/host",
		`{"when":"2026-03-01T22:00:00Z","for":"1h","host":"::1","subnet":"10.0.0.0/33"}`:       "/subnet",
		`{"when":"2026-03-01T22:00:00Z","for":"1h","host":"::1","listen":"::1:80"}`:            "/listen",
		`{"when":"2026-03-01T22:00:00Z","for":"1h","host":"::1","runbook":"not a uri"}`:        "/runbook",
		`{"when":"2026-03-01T22:00:00Z","for":"1h","host":"::1","pauses":["1s","1 day"]}`:      "/pauses/1",
		`{"when":"2026-03-01T22:00:00Z","for":"1h","host":"::1","notify":{"at":"monday"}}`:     "/notify/at",
		`{"when":"2026-03-01T22:00:00Z","for":"1h","host":"::1","subnet":"10.0.0.0/24","x":1}`: "",
	} {
		var ve *registry.ValidationError
		err := e.ValidateArgs([]byte(args))
		require.ErrorAs(t, err, &ve, args)
		if pointer == "" {
			continue // additionalProperties, for contrast
		}
		require.Len(t, ve.Violations, 1, args)
		assert.Equal(t, pointer, ve.Violations[0].Pointer, args)
		assert.Equal(t, "format", ve.Violations[0].Rule, "refused by the schema, before decoding: %s", args)
	}
}

// A value the format accepts but Go's parser does not (RFC 3339 allows a
// leap second, time.Parse does not) is refused by the decoding at the
// field's pointer, not at "/".
func TestDecodeFailureNamesTheField(t *testing.T) {
	e := maintenanceEntry(t)
	var in maintenanceArgs
	err := e.DecodeArgs([]byte(`{"when":"2026-12-31T23:59:60Z","for":"1h","host":"::1"}`), &in)
	var ve *registry.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Len(t, ve.Violations, 1)
	assert.Equal(t, "/when", ve.Violations[0].Pointer)
	assert.Equal(t, "decode", ve.Violations[0].Rule)
	assert.Contains(t, err.Error(), "/when")
}

// A catalog schema's format stays an annotation (JSON Schema 2020-12's
// default): only a schema in the format-assertion dialect, which SchemaFor
// writes, asserts it.
func TestCatalogFormatStaysAnAnnotation(t *testing.T) {
	r := registry.New(nil)
	require.NoError(t, r.Register(registry.NewTool("plain", "d", json.RawMessage(`{"type":"object","properties":{"when":{"type":"string","format":"date-time"}}}`))))
	e, _ := r.Lookup("plain")
	assert.NoError(t, e.ValidateArgs([]byte(`{"when":"yesterday"}`)))
}
