package registry

import (
	"errors"
	"testing"
)

func TestUnknownToolSuggests(t *testing.T) {
	r := New(nil)
	for _, n := range []string{"create_event", "delete_event", "admin_create_events"} {
		tool := Tool{Name: n, Description: "d", Parameters: []byte(`{"type":"object"}`), Safe: n != "admin_create_events"}
		if err := r.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	err := r.Validate("create_evnt", []byte(`{}`))
	if !errors.Is(err, ErrUnknownTool) || err.Error() != `unknown tool "create_evnt" (did you mean "create_event" or "admin_create_events"?)` {
		t.Fatalf("err = %v", err)
	}
	safeOnly := func(e *Entry) bool { return e.Def().Safe }
	if got := r.near("create_evnts", 3, safeOnly); len(got) != 1 || got[0] != "create_event" {
		t.Errorf("near limited to safe tools = %q, want [create_event]", got)
	}
	if err := r.UnknownTool("zzzz", nil); err.Error() != `unknown tool "zzzz"` {
		t.Errorf("a name nothing resembles: %v", err)
	}
}
