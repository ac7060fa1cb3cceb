package selecteval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/toolselect/toolselect/selector"
)

// Spec is one named candidate as a candidates file (`toolselect eval
// --select --candidates FILE`, a JSON array) or Python writes it: a partial
// configuration over the base settings. A field left out keeps the base's.
type Spec struct {
	// Name labels the candidate; required and unique.
	Name string `json:"name"`
	// BaseURL, Model, Provider and Mode override those settings.
	BaseURL  *string `json:"base_url,omitempty"`
	Model    *string `json:"model,omitempty"`
	Provider *string `json:"provider,omitempty"`
	Mode     *string `json:"mode,omitempty"`
	// Reasoning overrides the reasoning setting (as its JSON value).
	Reasoning json.RawMessage `json:"reasoning,omitempty"`
	// TopK and OfferTokens override the offer's settings.
	TopK        *int `json:"top_k,omitempty"`
	OfferTokens *int `json:"offer_tokens,omitempty"`
	// APIKeyFile names a file holding the API key; APIKeyEnv an environment
	// variable holding it. At most one; neither keeps the base's key.
	APIKeyFile string `json:"api_key_file,omitempty"`
	APIKeyEnv  string `json:"api_key_env,omitempty"`
}

// ParseSpecs reads a JSON array of [Spec]: unknown fields, a missing or
// repeated name, and both key sources at once are errors naming the entry.
func ParseSpecs(b []byte) ([]Spec, error) {
	var specs []Spec
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&specs); err != nil {
		return nil, fmt.Errorf("want a JSON array of candidates: %w", err)
	}
	if len(specs) == 0 {
		return nil, errors.New("no candidate in the list")
	}
	seen := map[string]bool{}
	for i, s := range specs {
		switch {
		case strings.TrimSpace(s.Name) == "":
			return nil, fmt.Errorf("candidate #%d has no \"name\"", i+1)
		case seen[s.Name]:
			return nil, fmt.Errorf("candidate #%d: the name %q is taken", i+1, s.Name)
		case s.APIKeyFile != "" && s.APIKeyEnv != "":
			return nil, fmt.Errorf("candidate %q: give api_key_file or api_key_env, not both", s.Name)
		}
		seen[s.Name] = true
	}
	return specs, nil
}

// Candidate applies the spec over base (the settings read from the
// environment or given by the caller) and checks the result as the selector
// checks any configuration ([selector.ConfigFromJSON]); a zero field of base
// means its default, as for [selector.New]. getenv reads the
// variable APIKeyEnv names. The feedback setting is not carried over: an
// evaluation records nothing.
func (s *Spec) Candidate(base selector.Settings, getenv func(string) string) (Candidate, error) {
	fail := func(err error) (Candidate, error) { return Candidate{}, fmt.Errorf("candidate %q: %w", s.Name, err) }
	b, err := json.Marshal(base)
	if err != nil {
		return fail(err)
	}
	doc := map[string]any{}
	if err := json.Unmarshal(b, &doc); err != nil {
		return fail(err)
	}
	delete(doc, "feedback")
	delete(doc, "api_key_set")
	for k, v := range doc {
		if v == 0.0 || v == "" { // a zero field means its default (selector.Settings)
			delete(doc, k)
		}
	}
	if base.APIKey != "" {
		doc["api_key"] = base.APIKey
	}
	set := func(key string, v any) { doc[key] = v }
	if s.BaseURL != nil {
		set("base_url", *s.BaseURL)
	}
	if s.Model != nil {
		set("model", *s.Model)
	}
	if s.Provider != nil {
		set("provider", *s.Provider)
	}
	if s.Mode != nil {
		set("mode", *s.Mode)
	}
	if len(s.Reasoning) > 0 {
		set("reasoning", s.Reasoning)
	}
	if s.TopK != nil {
		set("top_k", *s.TopK)
	}
	if s.OfferTokens != nil {
		set("offer_tokens", *s.OfferTokens)
	}
	switch {
	case s.APIKeyFile != "":
		k, err := os.ReadFile(s.APIKeyFile)
		if err != nil {
			return fail(fmt.Errorf("api_key_file: %w", err))
		}
		if strings.TrimSpace(string(k)) == "" {
			return fail(fmt.Errorf("api_key_file %s is empty", s.APIKeyFile))
		}
		set("api_key", strings.TrimSpace(string(k)))
	case s.APIKeyEnv != "":
		k := strings.TrimSpace(getenv(s.APIKeyEnv))
		if k == "" {
			return fail(fmt.Errorf("api_key_env: %s is not set", s.APIKeyEnv))
		}
		set("api_key", k)
	}
	b, err = json.Marshal(doc)
	if err != nil {
		return fail(err)
	}
	cfg, err := selector.ConfigFromJSON(b)
	if err != nil {
		return fail(err)
	}
	return Candidate{Name: s.Name, Config: cfg}, nil
}
