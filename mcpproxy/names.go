package mcpproxy

import (
	"fmt"
	"strings"
)

// An upstream's tools, prompts and resource URIs are served under one
// name: the upstream's name, the separator, then the upstream's own name
// (for a URI, what follows its scheme). served writes it and owner reads it
// back; one is the inverse of the other because no two upstreams' prefixes
// (name + separator) begin one another (checkPrefixes, at start). Without
// that, upstreams "rug" (tool "_read_file") and "rug_" (tool "read_file")
// would both serve "rug___read_file".

// served is the proxy's name for name of upstream u.
func (p *Proxy) served(u *upstream, name string) string {
	return u.cfg.Name + p.cfg.separator() + name
}

// owner is served's inverse: the upstream whose prefix begins s, and the
// rest of s.
func (p *Proxy) owner(s string) (*upstream, string, bool) {
	sep := p.cfg.separator()
	for _, u := range p.ups {
		if rest, ok := strings.CutPrefix(s, u.cfg.Name+sep); ok {
			return u, rest, true
		}
	}
	return nil, "", false
}

// checkPrefixes refuses two upstreams whose prefixes (name + sep) begin one
// another: a served name could then belong to either.
func checkPrefixes(ups []Upstream, sep string) error {
	for i, a := range ups {
		for _, b := range ups[i+1:] {
			pa, pb := a.Name+sep, b.Name+sep
			if strings.HasPrefix(pa, pb) || strings.HasPrefix(pb, pa) {
				long, short := a.Name, b.Name
				if len(long) < len(short) {
					long, short = short, long
				}
				rest := (long + sep)[len(short+sep):]
				return fmt.Errorf("upstreams %q and %q could serve one name: %q's tool %q and %q's tool %q are both %q; rename one of them",
					a.Name, b.Name, short, rest+"x", long, "x", short+sep+rest+"x")
			}
		}
	}
	return nil
}
