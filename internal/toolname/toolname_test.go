package toolname

import (
	"slices"
	"testing"
)

func TestNear(t *testing.T) {
	names := []string{"create_event", "delete_event", "list_events", "fs__read_text_file", "github__create_issue", "gitlab__create_issue"}
	for _, c := range []struct {
		name string
		want []string
	}{
		{"create_evnt", []string{"create_event"}},
		{"CREATE-EVENT", []string{"create_event"}},
		{"read_text_file", []string{"fs__read_text_file"}},
		{"filesystem__read_text_file", []string{"fs__read_text_file"}},
		{"read_txt", []string{"fs__read_text_file"}},
		{"github__create_isue", []string{"github__create_issue"}}, // the namespace given wins over another's
		{"zzzz", nil},
	} {
		if got := Near(c.name, names); !slices.Equal(got, c.want) {
			t.Errorf("Near(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSplit(t *testing.T) {
	for in, want := range map[string][2]string{
		"github__create_issue": {"github", "create_issue"}, "math.factorial": {"math", "factorial"},
		"fs/read": {"fs", "read"}, "plain": {"", "plain"}, "a__b.c": {"a", "b.c"},
	} {
		if ns, local := Split(in); ns != want[0] || local != want[1] {
			t.Errorf("Split(%q) = %q, %q, want %q", in, ns, local, want)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"a"}, ` (did you mean "a"?)`},
		{[]string{"a", "b", "c"}, ` (did you mean "a", "b" or "c"?)`},
	} {
		if got := DidYouMean(c.in); got != c.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
