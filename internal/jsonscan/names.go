package jsonscan

// Names is the set of member names one JSON object has given so far, for
// the readers that refuse a name given twice (strictjson's configuration
// reader, the registry's argument re-encoder). Objects are small: up to 16
// names are searched in a slice, more go into a map. The zero value is
// empty and ready.
type Names struct {
	list []string
	set  map[string]bool
}

// Add records name and reports whether the object gave it before.
func (n *Names) Add(name string) (repeated bool) {
	if n.set != nil {
		repeated = n.set[name]
		n.set[name] = true
		return repeated
	}
	for _, s := range n.list {
		if s == name {
			return true
		}
	}
	if n.list = append(n.list, name); len(n.list) > 16 {
		n.set = make(map[string]bool, 2*len(n.list))
		for _, s := range n.list {
			n.set[s] = true
		}
	}
	return false
}
