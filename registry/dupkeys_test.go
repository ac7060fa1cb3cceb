package registry_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// TestDuplicateKeysRefused: a name given twice in one object, at any depth
// and however it is spelt (escapes, invalid UTF-8 that decodes to the same
// name), is a duplicateKey violation whose pointer names the second member.
// Parsers disagree on which of the two wins, so the document cannot be both
// validated and run as one value.
func TestDuplicateKeysRefused(t *testing.T) {
	r := registry.New(nil)
	schema := `{"type":"object","properties":{"path":{"type":"string","pattern":"^/safe/"}}}`
	if err := r.Register(registry.NewTool("read_file", "Read a file.", json.RawMessage(schema))); err != nil {
		t.Fatal(err)
	}
	e, _ := r.Get("read_file")
	for _, c := range []struct{ args, pointer, key string }{
		{`{"path":"/safe/x","path":"/etc/shadow"}`, "/path", "path"},
		{`{"path":"/etc/shadow","path":"/safe/x"}`, "/path", "path"},
		{`{"path":"/safe/x","p\u0061th":"/etc/shadow"}`, "/path", "path"},
		{`{"path":"/safe/x","o":{"a":1,"b":2,"a":3}}`, "/o/a", "a"},
		{`{"path":"/safe/x","l":[0,{"x":[{"a/b":1,"a\/b":2}]}]}`, "/l/1/x/0/a~1b", "a/b"},
		{"{\"path\":\"/safe/x\",\"o\":{\"k\xff\":1,\"k\xfe\":2}}", "/o/k\uFFFD", "k\uFFFD"},
	} {
		_, err := e.ParseArgs([]byte(c.args))
		var ve *registry.ValidationError
		if !errors.As(err, &ve) || len(ve.Violations) != 1 {
			t.Errorf("%s: got %v, want one duplicateKey violation", c.args, err)
			continue
		}
		v := ve.Violations[0]
		if v.Rule != "duplicateKey" || v.Pointer != c.pointer || !strings.Contains(v.Message, strconv.Quote(c.key)) {
			t.Errorf("%s: got %+v, want rule duplicateKey at %s naming %q", c.args, v, c.pointer, c.key)
		}
		if r.Validate("read_file", []byte(c.args)) == nil {
			t.Errorf("%s: Registry.Validate accepts it", c.args)
		}
	}
	// Many members: the check is not only for small objects.
	big := `{"path":"/safe/x"`
	for i := 0; i < 40; i++ {
		big += `,"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":1`
	}
	if _, err := e.ParseArgs([]byte(big + `,"kz":1,"ka":2}`)); err != nil {
		t.Errorf("distinct names refused: %v", err)
	}
	if _, err := e.ParseArgs([]byte(big + `,"kaa":1,"kab":2,"kaa":3}`)); err == nil {
		t.Error("a duplicate after 40 members is accepted")
	}
}

// TestParseArgsReencodes: the document handed on is the checked value written
// again, compact and in the given order, with strings as they were decoded.
func TestParseArgsReencodes(t *testing.T) {
	r := registry.New(nil)
	if err := r.Register(registry.NewTool("t", "T.", json.RawMessage(`{"type":"object"}`))); err != nil {
		t.Fatal(err)
	}
	e, _ := r.Get("t")
	for in, want := range map[string]string{
		` { "z" : 1 , "a" : [ true , null , -0.5e3 ] } `: `{"z":1,"a":[true,null,-0.5e3]}`,
		`{"s":"\u0041\n<&>","n":12345678901234567890}`:   `{"s":"A\n<&>","n":12345678901234567890}`,
		"{\"bad\":\"a\xffb\",\"lone\":\"\\ud800\"}":      `{"bad":"a` + "\uFFFD" + `b","lone":"` + "\uFFFD" + `"}`,
		``: `{}`,
	} {
		got, err := e.ParseArgs([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("ParseArgs(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
}
