package strictjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

type inner struct {
	Command string            `json:"command"`
	Env     map[string]string `json:"env"`
}

type outer struct {
	AllowDestructive bool             `json:"allowDestructive"`
	Pins             string           `json:"pins"`
	Servers          map[string]inner `json:"servers"`
	List             []inner          `json:"list"`
	Free             map[string]any   `json:"free"`
	Raw              json.RawMessage  `json:"raw"`
	Hidden           string           `json:"-"`
	NoTag            int
	embedded
}

type embedded struct {
	Deep string `json:"deep"`
}

// TestRefusals: each document an attacker would write to be read one way by
// a person (or an exact-key check) and another by encoding/json is refused,
// naming the key and where it is.
func TestRefusals(t *testing.T) {
	for doc, want := range map[string]string{
		`{"allowDestructive": false, "AllowDestructive": true}`:       `"AllowDestructive" matches "allowDestructive" only in case`,
		`{"pins": "f", "Pins": ""}`:                                   `"Pins" matches "pins"`,
		`{"servers": {"fs": {"command": "x", "COMMAND": "/bin/sh"}}}`: `"servers.fs.COMMAND" matches "command"`,
		`{"servers": {"fs": {"env": {"PATH": "/a", "PATH": "/b"}}}}`:  `"servers.fs.env.PATH" is given twice`,
		`{"list": [{}, {"command": "a", "comm\u0061nd": "b"}]}`:       `"list.1.command" is given twice`,
		`{"free": {"a": [{"x": 1, "x": 2}]}}`:                         `"free.a.0.x" is given twice`,
		`{"pins": "a", "pins": "b"}`:                                  `"pins" is given twice`,
		`{"DEEP": "x"}`:                                               `"DEEP" matches "deep"`,
		`{"notag": 1}`:                                                `"notag" matches "NoTag"`,
		`{"pinſ": "x"}`:                                               `matches "pins"`, // U+017F folds to s for encoding/json
		`{"servers": {"Fs": {}, "fs": {}, "x": {"ENV": {}}}}`:         `"servers.x.ENV" matches "env"`,
		`{"allowDestructive": true} {}`:                               `unexpected data after the JSON value`,
		`{"surplus": 1}`:                                              `unknown field "surplus"`,
		`{"servers": {"fs": {"args": []}}}`:                           `unknown field "servers.fs.args" (the keys are command, env)`,
	} {
		var v outer
		err := Unmarshal([]byte(doc), &v)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", doc, err, want)
		}
	}
}

// TestKnownLeavesUnknownKeys: UnmarshalKnown leaves a key that is nobody's
// field, and refuses the rest as Unmarshal does.
func TestKnownLeavesUnknownKeys(t *testing.T) {
	var v outer
	if err := UnmarshalKnown([]byte(`{"pins": "p", "other": {"a": 1}, "servers": {"fs": {"command": "c", "type": "stdio"}}}`), &v); err != nil {
		t.Fatal(err)
	}
	if v.Pins != "p" || v.Servers["fs"].Command != "c" {
		t.Errorf("decoded %+v", v)
	}
	err := UnmarshalKnown([]byte(`{"servers": {"fs": {"command": "c", "Command": "/bin/sh"}}}`), &v)
	var ke *KeyError
	if !errors.As(err, &ke) || ke.Problem != ProblemCase || ke.Path != "servers.fs.Command" || ke.Key != "Command" {
		t.Errorf("got %#v", err)
	}
	err = UnmarshalKnown([]byte(`{"other": {"a": 1, "a": 2}}`), &v)
	if !errors.As(err, &ke) || ke.Problem != ProblemDuplicate || ke.Path != "other.a" {
		t.Errorf("got %#v", err)
	}
	if err := Check([]byte(`{"x": {"y": [1, {"z": 1, "z": 1}]}}`), nil); err == nil || !strings.Contains(err.Error(), `"x.y.1.z" is given twice`) {
		t.Errorf("Check: %v", err)
	}
	if err := Check([]byte(`{"Command": 1}`), reflect.TypeFor[inner]()); err == nil {
		t.Error("Check let a case variant through")
	}
}

// TestDecodesAsEncodingJSON: a document with exact keys decodes to what
// encoding/json gives, type errors included.
func TestDecodesAsEncodingJSON(t *testing.T) {
	var v outer
	if err := Unmarshal([]byte(`{"allowDestructive": true, "deep": "d", "NoTag": 3, "list": [{"command": "a", "env": {"K": "v"}}]}`), &v); err != nil {
		t.Fatal(err)
	}
	if !v.AllowDestructive || v.Deep != "d" || v.NoTag != 3 || v.List[0].Env["K"] != "v" {
		t.Errorf("decoded %+v", v)
	}
	// A RawMessage is its reader's to check (see Unmarshal).
	if err := Unmarshal([]byte(`{"raw": {"a": 1, "a": 2}}`), &v); err != nil || string(v.Raw) != `{"a": 1, "a": 2}` {
		t.Errorf("raw: %v %s", err, v.Raw)
	}
	if err := Unmarshal([]byte(`{"pins": 3}`), &v); err == nil || !strings.Contains(err.Error(), "cannot unmarshal number") {
		t.Errorf("type error: %v", err)
	}
	if err := Unmarshal([]byte(`{"pins": `), &v); err == nil {
		t.Error("truncated document accepted")
	}
	if err := Unmarshal([]byte(`{}`), v); err == nil {
		t.Error("non-pointer accepted")
	}
}
