package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolselect/toolselect/internal/testing/providerreplica"
	"github.com/toolselect/toolselect/selector"
)

// Each provider behaviour of testdata/providers through the command line:
// the case's settings as environment variables, the real go-openai client
// against the loopback replica, the outcome as `toolselect select` prints it.
func TestSelectProviders(t *testing.T) {
	cases, err := providerreplica.Load(filepath.Join("..", "..", "testdata", "providers"))
	require.NoError(t, err)
	var schema struct {
		Fields []struct {
			Name string
			Env  []string
		}
	}
	require.NoError(t, json.Unmarshal(selector.ConfigSchema(), &schema))
	envOf := map[string]string{}
	for _, f := range schema.Fields {
		if len(f.Env) > 0 {
			envOf[f.Name] = f.Env[0]
		}
	}
	// Two tools, as the Python tests' registry: a case with a small offer
	// budget offers one of them and may ask for a search round.
	catalog := writeTemp(t, "weather.json", `[{"name":"get_weather","description":"Current weather for a city.",
		"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},
		{"name":"add","description":"Add two integers.",
		"parameters":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}}]`)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			srv, err := c.Serve()
			require.NoError(t, err)
			defer srv.Close()
			vars := map[string]string{envVar("base_url"): srv.URL, envVar("api_key"): testKey}
			for k, v := range c.Config {
				name, ok := envOf[k]
				require.True(t, ok, "setting %q has no variable", k)
				vars[name] = fmt.Sprint(v)
			}
			r, out := runSelectCLI(t, vars, "--catalog", catalog, "--task", "What is the weather in Paris?", "--json")
			var raw struct {
				Attempts []struct {
					Dialect  string   `json:"dialect"`
					Adapted  []string `json:"adapted"`
					Repaired []string `json:"repaired"`
				} `json:"attempts"`
			}
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &raw), r.stdout+r.stderr)
			require.NotEmpty(t, out.Attempts)
			last := out.Attempts[len(out.Attempts)-1]
			if c.Expect.Kind != "" {
				require.Equal(t, exitFailed, r.code, r.stdout)
				require.NotNil(t, last.Error)
				assert.Equal(t, c.Expect.Kind, last.Error.Kind)
				for _, w := range c.Expect.MessageContains {
					assert.Contains(t, last.Error.Message, w)
				}
			} else {
				require.Equal(t, exitOK, r.code, r.stdout+r.stderr)
				got := make([]map[string]any, len(out.Calls))
				for i, call := range out.Calls {
					var args map[string]any
					require.NoError(t, json.Unmarshal(call.Args, &args))
					got[i] = map[string]any{"tool": call.Tool, "args": args}
				}
				assert.True(t, providerreplica.Same(got, c.Expect.Calls), "calls %v", got)
			}
			lastRaw := raw.Attempts[len(raw.Attempts)-1]
			assert.Equal(t, c.Expect.Dialect, lastRaw.Dialect)
			assert.Equal(t, c.Expect.Adapted, lastRaw.Adapted)
			assert.Equal(t, c.Expect.Repaired, lastRaw.Repaired)
			reqs := srv.Requests()
			if c.Expect.Requests != nil {
				assert.Len(t, reqs, *c.Expect.Requests, "requests sent")
			}
			if !c.Reaches() {
				return
			}
			require.NotEmpty(t, reqs)
			assert.Empty(t, c.Check(reqs[len(reqs)-1]))
		})
	}
}
