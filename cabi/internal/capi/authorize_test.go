package capi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/internal/testing/fixtures"
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
		// per-tool rules, before the rest: deny even a safe tool (whatever
		// the case), allow an unsafe one, ask about a safe one
		{`{"tool":"add","args":{"a":1}}`, `{"rules":{"deny":["AD*"]}}`, "denied_by_rule", false},
		{`{"tool":"rm","args":{}}`, `{"rules":{"allow":["rm"]}}`, "", true},
		{`{"tool":"rm","args":{}}`, `{"rules":{"allow":["rm"],"deny":["r*"]}}`, "denied_by_rule", false},
		{`{"tool":"add","args":{"a":1}}`, `{"rules":{"ask":["add"]}}`, "approval_required", false},
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
	// An ask rule with an approver: allowed, asked first; a bad pattern or
	// an unknown key in rules is an argument error naming it.
	v := decode(t, RegistryAuthorize(h, []byte(`{"tool":"add","args":{"a":1}}`), true, []byte(`{"approver":true,"rules":{"ask":["a?d"]}}`), true))
	if v["allowed"] != true || v["approval_required"] != true {
		t.Errorf("ask rule with an approver: %v", v)
	}
	for pol, want := range map[string]string{
		`{"rules":{"deny":["[x"]}}`:    `rules.deny[0] \"[x\": syntax error in pattern`,
		`{"rules":{"unsafe":"allow"}}`: `unsafe`,
		`{"rules":{"Deny":["x"]}}`:     `Deny`,
	} {
		r := RegistryAuthorize(h, []byte(`{"tool":"add","args":{"a":1}}`), true, []byte(pol), true)
		if r.Code != ErrArgument || !strings.Contains(string(r.Body), want) {
			t.Errorf("%s: %d %s, want %q", pol, r.Code, r.Body, want)
		}
	}
	// A policy refusal's reason comes without the Go executor's hint, which
	// names Options fields the caller does not have; the rule says which hint to give.
	v = decode(t, RegistryAuthorize(h, []byte(`{"tool":"rm","args":{}}`), true, []byte(`{}`), true))
	if v["reason"] != `"rm" is marked unsafe` || !strings.Contains(v["message"].(string), "Options.AllowUnsafe") {
		t.Errorf("reason %q, message %q", v["reason"], v["message"])
	}
	// The caller's hints replace Go's in the message and the audit record; a
	// rule the caller gives none for gets none.
	v = decode(t, RegistryAuthorize(h, []byte(`{"tool":"rm","args":{}}`), true,
		[]byte(`{"hints":{"unsafe":"pass allow_unsafe=True to run it"}}`), true))
	rec, _ := json.Marshal(v["audit"])
	if msg := v["message"].(string); !strings.HasSuffix(msg, "(pass allow_unsafe=True to run it)") || strings.Contains(msg, "Options") ||
		!strings.Contains(string(rec), "pass allow_unsafe=True") || strings.Contains(string(rec), "Options") {
		t.Errorf("with hints: message %q, audit %s", msg, rec)
	}
	v = decode(t, RegistryAuthorize(h, []byte(`{"tool":"reset","args":{}}`), true, []byte(`{"hints":{}}`), true))
	if msg := v["message"].(string); strings.Contains(msg, "Options") || strings.HasSuffix(msg, ")") {
		t.Errorf("with no hint for role: message %q", msg)
	}
	wantErr(t, RegistryAuthorize(h, []byte(`{"tool":"add"}`), true, []byte(`{"allow_unsafe":true,"bogus":1}`), true), ErrArgument, "bogus")
	wantErr(t, RegistryAuthorize(h, nil, false, nil, false), ErrArgument, "call_json")
}

// TestRegistryAuthorizeExactKeys: policy and call keys match exactly; a key
// in another case, or given twice, is an argument error naming it, never
// read as the key it resembles.
func TestRegistryAuthorizeExactKeys(t *testing.T) {
	h := newRegistry(t)
	if r := RegistryRegister(h, []byte(`{"name":"rm","description":"delete","parameters":{"type":"object"},"safe":false}`), true); r.Code != OK {
		t.Fatal(string(r.Body))
	}
	call := []byte(`{"tool":"rm","args":{}}`)
	for policy, want := range map[string]string{
		`{"Allow_Unsafe":true}`:                      `"Allow_Unsafe"`,
		`{"ALLOW_UNSAFE":true}`:                      `"ALLOW_UNSAFE"`,
		`{"allow_unsafe":false,"allow_unsafe":true}`: `"allow_unsafe" is given twice`,
		`{"Roles":["admin"]}`:                        `"Roles"`,
	} {
		wantErr(t, RegistryAuthorize(h, call, true, []byte(policy), true), ErrArgument, want)
	}
	wantErr(t, RegistryAuthorize(h, []byte(`{"Tool":"rm","args":{}}`), true, nil, false), ErrArgument, `"Tool"`)
	wantErr(t, RegistryAuthorize(h, []byte(`{"tool":"rm","Args":{}}`), true, nil, false), ErrArgument, `"Args"`)
}

// TestRegistryAuthorizeDuplicateArgs: arguments naming a key twice are
// refused as invalid_args with the key; allowed arguments come back as the
// validated value, never the caller's bytes.
func TestRegistryAuthorizeDuplicateArgs(t *testing.T) {
	h := newRegistry(t)
	if r := RegistryRegister(h, []byte(`{"name":"read","description":"read","parameters":{"type":"object","properties":{"path":{"type":"string","pattern":"^/safe/"}}}}`), true); r.Code != OK {
		t.Fatal(string(r.Body))
	}
	v := decode(t, RegistryAuthorize(h, []byte(`{"tool":"read","args":{"path":"/safe/x","path":"/etc/shadow"}}`), true, nil, false))
	if v["allowed"] != false || v["rule"] != "invalid_args" || !strings.Contains(fmt.Sprint(v["violations"]), "duplicateKey") || !strings.Contains(fmt.Sprint(v["message"]), `"path"`) {
		t.Errorf("duplicate key: %v", v)
	}
	r := RegistryAuthorize(h, []byte(`{"tool":"read","args":{ "path" : "/safe/\u0078" }}`), true, nil, false)
	var out struct {
		Allowed bool            `json:"allowed"`
		Args    json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil || !out.Allowed || string(out.Args) != `{"path":"/safe/x"}` {
		t.Errorf("allowed args: %s", r.Body)
	}
	vr := decode(t, RegistryValidate(h, []byte("read"), true, []byte(`{"path":"/safe/x","path":"/etc/shadow"}`), true))
	if vr["valid"] != false || !strings.Contains(fmt.Sprint(vr["violations"]), "duplicateKey") {
		t.Errorf("validate: %v", vr)
	}
}

// TestRegistryAuthorizeNumbersAsReceived: the C ABI gives the verdict the Go
// registry, Python and the proxy give on the one table of numbers
// (testdata/numbers/cases.json): a number is judged as the double a
// receiver reads, and the args it allows are that value.
func TestRegistryAuthorizeNumbersAsReceived(t *testing.T) {
	schema, cases := fixtures.Numbers(t)
	h := newRegistry(t)
	tool, _ := json.Marshal(map[string]any{"name": "ratio", "description": "d", "parameters": schema})
	if r := RegistryRegister(h, tool, true); r.Code != OK {
		t.Fatal(string(r.Body))
	}
	for _, c := range cases {
		// The audit record keeps the text received (1e400): read with
		// UseNumber, as a float reader would refuse it.
		var v map[string]any
		dec := json.NewDecoder(bytes.NewReader(RegistryAuthorize(h, []byte(`{"tool":"ratio","args":`+c.Args+`}`), true, nil, false).Body))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if c.Refused != "" {
			viol, _ := json.Marshal(v["violations"])
			if v["allowed"] != false || v["rule"] != "invalid_args" || !strings.Contains(string(viol), `"pointer":"`+c.Pointer+`","rule":"`+c.Refused+`"`) {
				t.Errorf("%s (%s): %v, want refused by %s at %s", c.Args, c.Why, v, c.Refused, c.Pointer)
			}
			continue
		}
		got, _ := json.Marshal(v["args"])
		if v["allowed"] != true || string(got) != c.Passed {
			t.Errorf("%s (%s): %v, want allowed with %s", c.Args, c.Why, v, c.Passed)
		}
	}
}
