package capi

import (
	"strings"
	"testing"

	"github.com/toolselect/toolselect/internal/testing/telemetrytest"
)

// A caller's trace context in the request (Python's current span) is
// continued by the selection's spans.
func TestSessionContinuesCallerTrace(t *testing.T) {
	rec, _ := telemetrytest.Install(t)

	reg := addRegistry(t)
	sel := handleOf(t, SelectorNew([]byte(`{"model":"m1"}`), true))
	defer SelectorClose(sel)
	req := strings.TrimSuffix(testRequest, "}") + `,"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}`
	r := SessionBegin(sel, reg, []byte(req), true)
	act := decode(t, r)
	if r.Code != OK {
		t.Fatalf("begin: %s", r.Body)
	}
	sess := uint64(act["session"].(float64))
	defer SessionClose(sess)
	SessionFeed(sess, []byte(`{"content":"{\"calls\":[]}"}`), true)
	found := false
	for _, s := range rec.Ended() {
		if s.Name() == "toolselect.select" {
			found = true
			if got := s.SpanContext().TraceID().String(); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
				t.Errorf("selection span in trace %s, want the caller's", got)
			}
			if got := s.Parent().SpanID().String(); got != "00f067aa0ba902b7" {
				t.Errorf("selection span under %s, want the caller's span", got)
			}
		}
	}
	if !found {
		t.Fatal("no selection span")
	}
	wantErr(t, SessionBegin(sel, reg, []byte(strings.TrimSuffix(testRequest, "}")+`,"traceparnt":"x"}`), true), ErrArgument, "traceparnt")
}
