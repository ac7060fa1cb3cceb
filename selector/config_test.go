package selector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigDefaults(t *testing.T) {
	c, err := ConfigFromEnvMap(nil)
	require.NoError(t, err)
	assert.Equal(t, Config{Settings: Settings{Model: "glm-4.5-air", MaxCalls: 5, Timeout: 30 * time.Second, Temperature: 0,
		FailOpen: false, Mode: "json", MaxResponseBytes: 4 << 20, OfferTokens: 10000, TopK: 10, MaxSearches: 1}}, c)
	assert.Equal(t, defaultConfig(), c)
	// Empty values count as unset.
	c, err = ConfigFromEnvMap(map[string]string{envOf("max_calls"): "", envOf("fail_closed"): "", envOf("model"): ""})
	require.NoError(t, err)
	assert.Equal(t, defaultConfig(), c)
}

func TestConfigFromEnvValues(t *testing.T) {
	c, err := ConfigFromEnvMap(map[string]string{
		envOf("model"): "gpt-4o-mini", envOf("fallback_model"): "qwen3", envOf("max_calls"): "20", envOf("timeout_s"): " 120 ",
		envOf("fail_closed"): "off", envOf("temperature"): "0.25", envOf("base_url"): "http://localhost:11434/v1", envOf("api_key"): "k1",
		envOf("mode"): "NATIVE", envOf("max_response_bytes"): "1024",
		envOf("offer_tokens"): "500", envOf("top_k"): "1000", envOf("max_searches"): "0",
		"OPENAI_BASE_URL": "https://ignored.example/v1", "OPENAI_API_KEY": "ignored",
	})
	require.NoError(t, err)
	assert.Equal(t, Config{Settings: Settings{Model: "gpt-4o-mini", FallbackModel: "qwen3", MaxCalls: 20, Timeout: 120 * time.Second,
		FailOpen: true, Temperature: 0.25, BaseURL: "http://localhost:11434/v1", APIKey: "k1", Mode: "native",
		MaxResponseBytes: 1024, OfferTokens: 500, TopK: 1000, NoSearch: true}}, c)
	assert.Equal(t, 0, c.Searches())
}

func TestConfigOpenAIFallbacks(t *testing.T) {
	c, err := ConfigFromEnvMap(map[string]string{"OPENAI_BASE_URL": "https://api.example/v1", "OPENAI_API_KEY": "sk-x"})
	require.NoError(t, err)
	assert.Equal(t, "https://api.example/v1", c.BaseURL)
	assert.Equal(t, "sk-x", c.APIKey)
}

func TestConfigFromProcessEnv(t *testing.T) {
	t.Setenv(envOf("max_calls"), "7")
	t.Setenv(envOf("fail_closed"), "No")
	c, err := ConfigFromEnv()
	require.NoError(t, err)
	assert.Equal(t, 7, c.MaxCalls)
	assert.True(t, c.FailOpen)
}

func TestConfigFailClosedSpellings(t *testing.T) {
	for _, v := range []string{"1", "true", "t", "yes", "y", "on", "TRUE", "Yes", "ON", " y "} {
		c, err := ConfigFromEnvMap(map[string]string{envOf("fail_closed"): v})
		require.NoError(t, err, v)
		assert.False(t, c.FailOpen, v)
	}
	for _, v := range []string{"0", "false", "f", "no", "n", "off", "FALSE", "No", "Off"} {
		c, err := ConfigFromEnvMap(map[string]string{envOf("fail_closed"): v})
		require.NoError(t, err, v)
		assert.True(t, c.FailOpen, v)
	}
}

func TestConfigRejectsBadValues(t *testing.T) {
	cases := []struct{ env, value, want string }{
		{envOf("max_calls"), "abc", "an integer from 1 to 20"},
		{envOf("max_calls"), "0", "an integer from 1 to 20"},
		{envOf("max_calls"), "21", "an integer from 1 to 20"},
		{envOf("max_calls"), "5.0", "an integer from 1 to 20"},
		{envOf("timeout_s"), "0", "from 1 to 120"},
		{envOf("timeout_s"), "121", "from 1 to 120"},
		{envOf("timeout_s"), "30s", "from 1 to 120"},
		{envOf("temperature"), "1.5", "a number from 0 to 1"},
		{envOf("temperature"), "-0.1", "a number from 0 to 1"},
		{envOf("temperature"), "NaN", "a number from 0 to 1"},
		{envOf("temperature"), "warm", "a number from 0 to 1"},
		{envOf("fail_closed"), "maybe", "1, true, t, yes, y, on"},
		{envOf("fail_closed"), "2", "1, true, t, yes, y, on"},
		{envOf("mode"), "xml", "json or native"},
		{envOf("max_response_bytes"), "10", "from 1024 to 1073741824"},
		{envOf("max_response_bytes"), "4MB", "from 1024 to 1073741824"},
		{envOf("base_url"), "localhost:8080", "an http or https URL"},
		{envOf("offer_tokens"), "0", "from 1 to 10000000"},
		{envOf("offer_tokens"), "lots", "from 1 to 10000000"},
		{envOf("top_k"), "0", "an integer from 1 to 1000"},
		{envOf("top_k"), "1001", "an integer from 1 to 1000"},
		{envOf("max_searches"), "-1", "from 0 (no search round) to 10"},
		{envOf("max_searches"), "11", "from 0 (no search round) to 10"},
		{envOf("model"), "   ", ""}, // spaces only: trimmed to empty, so the default applies
	}
	for _, tc := range cases {
		t.Run(tc.env+"="+tc.value, func(t *testing.T) {
			c, err := ConfigFromEnvMap(map[string]string{tc.env: tc.value})
			if tc.want == "" {
				require.NoError(t, err)
				assert.Equal(t, DefaultModel, c.Model)
				return
			}
			require.Error(t, err, "must not fall back to the default")
			assert.ErrorIs(t, err, ErrInvalidConfig)
			assert.Contains(t, err.Error(), tc.env)
			assert.Contains(t, err.Error(), tc.want)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, Config{}, c)
		})
	}
}

func TestConfigErrorsListEveryVariable(t *testing.T) {
	_, err := ConfigFromEnvMap(map[string]string{envOf("max_calls"): "99", envOf("timeout_s"): "0"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), envOf("max_calls"))
	assert.Contains(t, err.Error(), envOf("timeout_s"))
}

func TestConfigValidateGoBuilt(t *testing.T) {
	c := defaultConfig()
	c.MaxCalls = 50
	err := c.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), envOf("max_calls"))
	_, err = New(nil, &c)
	assert.ErrorIs(t, err, ErrInvalidConfig)

	s, err := New(nil, &Config{Settings: Settings{Model: "m", FailOpen: false}})
	require.NoError(t, err)
	assert.Equal(t, 5, s.Config().MaxCalls)
	assert.Equal(t, 30*time.Second, s.Config().Timeout)
	assert.Equal(t, ModeJSON, s.Config().Mode)
	assert.Equal(t, defaults.OfferTokens, s.Config().OfferTokens)
	assert.Equal(t, DefaultTopK, s.Config().TopK)
	assert.Equal(t, 1, s.Config().Searches(), "a zero Config searches once, like the environment's default")
	s, err = New(nil, &Config{Settings: Settings{NoSearch: true}})
	require.NoError(t, err)
	assert.Equal(t, 0, s.Config().Searches())
	s, err = New(nil, nil)
	require.NoError(t, err)
	assert.Equal(t, defaultConfig(), s.Config())
	// Only settings with a default are filled: a base URL of spaces is refused, not cleared.
	_, err = New(nil, &Config{Settings: Settings{BaseURL: "  "}})
	assert.ErrorIs(t, err, ErrInvalidConfig)
}

func TestConfigFromJSON(t *testing.T) {
	c, err := ConfigFromJSON([]byte(`{"model":"m","max_calls":3,"api_key":"k"}`))
	require.NoError(t, err)
	assert.Equal(t, 3, c.MaxCalls)
	assert.False(t, c.FailOpen, "missing keys keep their defaults")
	assert.Equal(t, "k", c.APIKey)
	_, err = ConfigFromJSON([]byte(`{"max_call":3}`))
	assert.ErrorIs(t, err, ErrInvalidConfig)
	_, err = ConfigFromJSON([]byte(`{"timeout_s":500}`))
	assert.ErrorContains(t, err, envOf("timeout_s"))
	// What MarshalJSON writes reads back (without the key).
	b, err := json.Marshal(c)
	require.NoError(t, err)
	back, err := ConfigFromJSON(b)
	require.NoError(t, err)
	c.APIKey = ""
	assert.Equal(t, c, back)

	// The budget fields; max_searches 0 turns searching off and reads back as such.
	c, err = ConfigFromJSON([]byte(`{"offer_tokens":2000,"top_k":5,"max_searches":0}`))
	require.NoError(t, err)
	assert.Equal(t, 2000, c.OfferTokens)
	assert.Equal(t, 5, c.TopK)
	assert.Equal(t, 0, c.Searches())
	b, err = json.Marshal(c)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"offer_tokens":2000,"top_k":5`)
	assert.Contains(t, string(b), `"max_searches":0`)
	back, err = ConfigFromJSON(b)
	require.NoError(t, err)
	assert.Equal(t, c, back)
	for _, bad := range []string{`{"max_searches":-1}`, `{"max_searches":11}`, `{"top_k":0}`, `{"top_k":1001}`, `{"offer_tokens":0}`} {
		_, err = ConfigFromJSON([]byte(bad))
		assert.ErrorIs(t, err, ErrInvalidConfig, bad)
	}
}

func TestConfigNeverPrintsKey(t *testing.T) {
	const key = "sk-live-DO-NOT-LEAK-42"
	c := defaultConfig()
	c.APIKey = key
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("cfg", "config", c)
	b, _ := json.Marshal(c)
	for _, s := range []string{c.String(), fmt.Sprint(c), fmt.Sprintf("%v %+v %#v", c, c, c), string(b), logs.String(), fmt.Sprint(&c)} {
		assert.NotContains(t, s, key)
	}
	assert.Contains(t, string(b), `"api_key_set":true`)
	// Error messages about the endpoint never echo the value either.
	_, err := ConfigFromEnvMap(map[string]string{envOf("base_url"): "ftp://" + key})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), key)
	var ce *ConfigError
	require.True(t, errors.As(err, &ce))
}

// Timeout is a time.Duration in Go and whole seconds on the wire: JSON and
// the environment read and write seconds, and an out-of-range value is
// reported as the seconds the caller wrote.
func TestTimeoutIsADurationInGoAndSecondsOnTheWire(t *testing.T) {
	c, err := ConfigFromJSON([]byte(`{"timeout_s": 45}`))
	require.NoError(t, err)
	assert.Equal(t, 45*time.Second, c.Timeout)
	b, err := json.Marshal(c)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"timeout_s":45`)

	c, err = ConfigFromEnvMap(map[string]string{envOf("timeout_s"): "7"})
	require.NoError(t, err)
	assert.Equal(t, 7*time.Second, c.Timeout)

	for _, bad := range []string{`{"timeout_s": 500}`, `{"timeout_s": -5}`, `{"timeout_s": 0}`} {
		_, err = ConfigFromJSON([]byte(bad))
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, bad)
		assert.Equal(t, "Timeout", ce.Field)
		assert.Contains(t, bad, ce.Value, "the value is reported as written")
	}

	// A fraction of a second is valid in Go and written rounded up.
	c = defaultConfig()
	c.Timeout = 1500 * time.Millisecond
	require.NoError(t, c.Validate())
	b, _ = json.Marshal(c)
	assert.Contains(t, string(b), `"timeout_s":2`)
}

// A variable with the selector's prefix that names no setting is not
// ignored without a word: EnvWarnings names the closest setting, and New
// logs it at WARN.
func TestUnknownEnvWarns(t *testing.T) {
	env := map[string]string{EnvPrefix + "MAX_CALS": "3", EnvPrefix + "MAX_CALLS": "4", EnvPrefix + "FAIL_CLOSD": "false",
		EnvPrefix + "API_KY": "sk-secret", EnvPrefix + "ZZZZZZ": "1", EnvPrefix + "EMPTY_ONE": " ", "OTHER_VAR": "x"}
	got := unknownEnv(env)
	assert.Equal(t, []string{
		EnvPrefix + `API_KY names no setting and is ignored (did you mean ` + EnvPrefix + `API_KEY?)`,
		EnvPrefix + `FAIL_CLOSD names no setting and is ignored (did you mean ` + EnvPrefix + `FAIL_CLOSED?)`,
		EnvPrefix + `MAX_CALS names no setting and is ignored (did you mean ` + EnvPrefix + `MAX_CALLS?)`,
		EnvPrefix + `ZZZZZZ names no setting and is ignored`,
	}, got)

	cfg, err := ConfigFromEnvMap(env)
	require.NoError(t, err)
	assert.Equal(t, 4, cfg.MaxCalls)
	assert.Equal(t, got, cfg.EnvWarnings())
	var logs bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	_, err = New(nil, &cfg)
	require.NoError(t, err)
	assert.Contains(t, logs.String(), "level=WARN")
	assert.Contains(t, logs.String(), "did you mean "+EnvPrefix+"MAX_CALLS?")
	assert.NotContains(t, logs.String(), "sk-secret")
	assert.Empty(t, unknownEnv(map[string]string{EnvPrefix + "MAX_CALLS": "3", "OPENAI_API_KEY": "k"}))
}
