package registry

// PinStore keeps the entries of [Pins]: a pin file (LoadPins), or a store
// several processes share (the MCP proxy's --state redis://...). It only
// reads and writes entries; every pin rule (what is held, what an approval
// may approve) is the Pins' own, the same whatever keeps them. An entry is
// keyed by [PinCheck.Key] and is JSON the Pins write and read back
// unchanged. A store is used by one Pins, which serialises its calls.
type PinStore interface {
	// Read returns every entry when the store changed since it was last
	// read or written through this store (or always, with force), and
	// whether it changed; unchanged, entries are nil.
	Read(force bool) (entries map[string][]byte, changed bool, err error)
	// Commit applies the changes, each only where the store still holds
	// its Old, all in one atomic step, and returns every entry after it
	// and whether the store held content not written through this store
	// (an entry changed meanwhile, which then keeps the store's version).
	Commit(changes []PinChange) (entries map[string][]byte, changed bool, err error)
	// Where names the store in messages: a path, or a URL without its
	// password.
	Where() string
	// Flag is the command-line flag naming the store: "--pins FILE",
	// "--state URL".
	Flag() string
}

// PinChange is one entry written by [PinStore.Commit]: Key's entry becomes
// New (nil: removed) where it still is Old (nil: no entry).
type PinChange struct {
	Key      string
	Old, New []byte
}
