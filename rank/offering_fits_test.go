package rank_test

import (
	"path/filepath"
	"testing"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

// The offer budget is the whole view's token count: a budget of exactly that
// many tokens fits, one fewer does not (summing each tool's lone count, which
// carries the list's brackets, used to overcount by about two per tool).
func TestOfferingFitsAtTheExactCount(t *testing.T) {
	tools, _, err := registry.LoadCatalogFile(filepath.Join("..", "examples", "assistant.json"))
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New(nil)
	if err := reg.RegisterAll(tools); err != nil {
		t.Fatal(err)
	}
	entries := reg.Entries()
	for _, f := range []registry.Format{registry.FormatSchema, registry.FormatOpenAI, registry.FormatAnthropic} {
		o := &rank.Offering{}
		exact, err := o.Tokens(entries, f)
		if err != nil {
			t.Fatal(err)
		}
		tc, _ := rank.NewTokenCounter(rank.EncodingO200k)
		if n, _ := tc.CountTools(entries, f); n != exact {
			t.Fatalf("%s: Tokens %d, the token counter %d", f, exact, n)
		}
		for budget, want := range map[int]bool{exact: true, exact - 1: false, exact + 40: true, exact - 40: false} {
			got, err := o.Fits(entries, f, budget)
			if err != nil || got != want {
				t.Errorf("%s: Fits(budget %d; the view is %d tokens) = %v, %v; want %v", f, budget, exact, got, err, want)
			}
		}
	}
}
