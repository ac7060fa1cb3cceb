package registry_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// TestConcurrentReadersAndWriter runs 8 readers (Lookup under canonical and
// mapped names, Validate, View, ViewItems, Snapshot) against one writer that
// registers, replaces and unregisters. Run under -race. Readers must always
// see a consistent catalog: a snapshot never changes, a name that resolves
// validates, and views always parse.
func TestConcurrentReadersAndWriter(t *testing.T) {
	r := registry.New(nil)
	stable := []string{"fs.read", "Search & Replace", "get_weather"}
	for _, n := range stable {
		if err := r.Register(tool(n, objSchema)); err != nil {
			t.Fatal(err)
		}
	}
	mapped := r.ProviderName(registry.FormatOpenAI, "Search & Replace")

	const rounds = 100
	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	report := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}

	wg.Add(1)
	go func() { // the writer
		defer wg.Done()
		defer done.Store(true)
		for i := range rounds {
			name := fmt.Sprintf("dyn.tool %d", i%7)
			if err := r.Register(tool(name, objSchema)); err != nil && !errors.Is(err, registry.ErrDuplicateName) {
				report(err)
			}
			if err := r.Replace(tool("get_weather", fmt.Sprintf(`{"type":"object","properties":{"q":{"type":"string","maxLength":%d}},"required":["q"]}`, 10+i))); err != nil {
				report(err)
			}
			if i%3 == 0 {
				r.Unregister(name)
			}
			if err := r.RegisterAll([]registry.Tool{tool(fmt.Sprintf("batch %d a", i), objSchema), tool(fmt.Sprintf("batch %d b", i), objSchema)}); err != nil {
				report(err)
			}
			r.Unregister(fmt.Sprintf("batch %d a", i))
			r.Unregister(fmt.Sprintf("batch %d b", i))
		}
	}()

	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !done.Load() || n < 20; n++ {
				for _, name := range []string{"fs.read", mapped, "get_weather"} {
					e, ok := r.Lookup(name)
					if !ok {
						report(fmt.Errorf("reader %d: %q vanished", g, name))
						continue
					}
					if err := e.ValidateArgs([]byte(`{"q":"x"}`)); err != nil {
						report(fmt.Errorf("reader %d: %v", g, err))
					}
					if err := r.Validate(name, []byte(`{}`)); !errors.Is(err, registry.ErrInvalidArgs) {
						report(fmt.Errorf("reader %d: Validate(%q, {}) = %v", g, name, err))
					}
				}
				snap, gen := r.Snapshot()
				names := make([]string, len(snap))
				for i, e := range snap {
					names[i] = e.Name()
				}
				f := registry.Formats()[(g+n)%len(registry.Formats())]
				view, err := r.ViewOf(snap, f)
				if err != nil {
					report(err)
				} else if back, _, err := registry.ParseCatalog(view); err != nil || len(back) != len(snap) {
					report(fmt.Errorf("reader %d: %s view of %d tools parsed to %d: %v", g, f, len(snap), len(back), err))
				}
				if _, err := r.ViewItems(snap, f); err != nil {
					report(err)
				}
				for i, e := range snap {
					if e.Name() != names[i] {
						report(fmt.Errorf("reader %d: snapshot of generation %d changed", g, gen))
					}
				}
				if len(snap) < len(stable) {
					report(fmt.Errorf("reader %d: snapshot has %d tools", g, len(snap)))
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := r.Names()[:3]; fmt.Sprint(got) != fmt.Sprint(stable) {
		t.Errorf("stable tools moved: %q", got)
	}
}
