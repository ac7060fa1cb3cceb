package capi

import (
	"strings"
	"testing"
)

func TestRegistryAuthorize(t *testing.T) {
	h := newRegistry(t)
	for _, tool := range []string{
		`{"name":"rm","description":"delete","parameters":{"type":"object"},"safe":false}`,
		`{"name":"reset","description":"reset","parameters":{"type":"object"},"roles":["admin"]}`,
		`{"name":"add","description":"add","parameters":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}`,
	} {
		if r := RegistryRegister(h, []byte(tool), true); r.Code != OK {
			t.Fatal(string(r.Body))
		}
	}
	for _, c := range []struct {
		call, policy, rule string
		allowed            bool
	}{
		{`{"tool":"rm","args":{}}`, `{}`, "unsafe", false},
		{`{"tool":"rm","args":{}}`, `{"allow_unsafe":true}`, "", true},
		{`{"tool":"reset","args":{}}`, `{"roles":["viewer"]}`, "role", false},
		{`{"tool":"reset","args":{}}`, `{"roles":["admin"]}`, "", true},
		{`{"tool":"add","args":{}}`, `{}`, "invalid_args", false},
		{`{"tool":"add","args":{"a":1}}`, `{"capabilities":["readOnly"]}`, "capability", false},
		{`{"tool":"add","args":{"a":1}}`, ``, "", true},
		{`{"tool":"nope","args":{}}`, `{}`, "unknown_tool", false},
	} {
		var pol []byte
		if c.policy != "" {
			pol = []byte(c.policy)
		}
		r := RegistryAuthorize(h, []byte(c.call), true, pol, c.policy != "")
		if r.Code != OK {
			t.Fatalf("%s %s: %s", c.call, c.policy, r.Body)
		}
		v := decode(t, r)
		if v["allowed"] != c.allowed || (!c.allowed && v["rule"] != c.rule) {
			t.Errorf("%s %s: %s", c.call, c.policy, r.Body)
		}
		if !c.allowed && v["audit"] == nil {
			t.Errorf("%s: a refusal without its audit record: %s", c.call, r.Body)
		}
	}
	// A policy refusal's reason comes without the Go executor's hint, which
	// names Options fields the caller does not have; the rule says which hint to give.
	v := decode(t, RegistryAuthorize(h, []byte(`{"tool":"rm","args":{}}`), true, []byte(`{}`), true))
	if v["reason"] != `"rm" is marked unsafe` || !strings.Contains(v["message"].(string), "Options.AllowUnsafe") {
		t.Errorf("reason %q, message %q", v["reason"], v["message"])
	}
	wantErr(t, RegistryAuthorize(h, []byte(`{"tool":"add"}`), true, []byte(`{"allow_unsafe":true,"bogus":1}`), true), ErrArgument, "bogus")
	wantErr(t, RegistryAuthorize(h, nil, false, nil, false), ErrArgument, "call_json")
}
