package rank

import (
	"strings"
	"sync"

	"github.com/toolselect/toolselect/registry"
)

// Catalog is one version of a tool list in catalog (registration) order, the
// unit scorers index. It is immutable; scorers attach per-catalog state (an
// inverted index, cached vectors) with State, and a new version of a catalog
// hands each scorer the state of the version before it, so indexes are
// updated incrementally instead of rebuilt.
type Catalog struct {
	entries []*registry.Entry
	gen     uint64
	sourced bool // taken from a registry snapshot

	namesOnce sync.Once
	byName    map[string]int
	multi     map[string]int // first word of a name of several words -> its most words (at most 8)

	mu         sync.Mutex
	states     map[string]*stateCell
	prevStates map[string]any // states of the previous version, consumed once
}

type stateCell struct {
	once sync.Once
	v    any
	err  error
}

// newCatalog returns a catalog over entries (not copied; do not modify them).
func newCatalog(entries []*registry.Entry) *Catalog {
	return &Catalog{entries: entries, states: map[string]*stateCell{}}
}

// built returns the state under key if it has been built, without building
// it.
func (c *Catalog) built(key string) any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cell, ok := c.states[key]; ok {
		return cell.v
	}
	return nil
}

// next returns a new version over entries that inherits c's states.
func (c *Catalog) next(entries []*registry.Entry, gen uint64) *Catalog {
	n := newCatalog(entries)
	n.gen = gen
	if c != nil {
		c.mu.Lock()
		n.prevStates = make(map[string]any, len(c.states)+len(c.prevStates))
		for k, v := range c.prevStates {
			n.prevStates[k] = v
		}
		for k, cell := range c.states {
			if cell.v != nil {
				n.prevStates[k] = cell.v
			}
		}
		c.mu.Unlock()
	}
	return n
}

// Entries returns the tools in catalog order. The slice must not be modified.
func (c *Catalog) Entries() []*registry.Entry { return c.entries }

// Len is the number of tools.
func (c *Catalog) Len() int { return len(c.entries) }

// Generation is the registry generation the catalog was taken at (0 for a
// catalog built from a plain list).
func (c *Catalog) Generation() uint64 { return c.gen }

// Pos returns the catalog position of the named tool.
func (c *Catalog) Pos(name string) (int, bool) {
	c.namesOnce.Do(func() {
		c.byName = make(map[string]int, len(c.entries))
		for i, e := range c.entries {
			if _, dup := c.byName[e.Name()]; !dup {
				c.byName[e.Name()] = i
			}
			if w := strings.Fields(e.Name()); len(w) > 1 {
				n := min(len(w), 8)
				if c.multi == nil {
					c.multi = map[string]int{}
				}
				c.multi[w[0]] = max(c.multi[w[0]], n)
			}
		}
	})
	p, ok := c.byName[name]
	return p, ok
}

// State returns the value stored under key, building it once per catalog
// version. build receives the previous version's value for key (nil if none)
// so it can update it incrementally; it must not modify that value, which
// concurrent queries may still be reading.
func (c *Catalog) State(key string, build func(prev any) (any, error)) (any, error) {
	c.mu.Lock()
	cell, ok := c.states[key]
	if !ok {
		cell = &stateCell{}
		c.states[key] = cell
	}
	prev := c.prevStates[key]
	c.mu.Unlock()
	cell.once.Do(func() {
		v, err := build(prev)
		// Set under c.mu: next() reads cell.v under c.mu while this build may
		// still be running for another reader.
		c.mu.Lock()
		cell.v, cell.err = v, err
		delete(c.prevStates, key)
		if cell.err != nil { // let a later call retry
			delete(c.states, key)
		}
		c.mu.Unlock()
	})
	return cell.v, cell.err
}
