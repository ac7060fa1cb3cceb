package registry

import (
	"errors"
	"sync"
)

// Pins hold a hash of each tool's canonical definition, taken the first time
// the tool was seen, so that a tool whose definition later changes (a "rug
// pull" after approval, a description poisoned with hidden instructions) is
// held until someone approves the change. It is the one pin check of the
// project: the MCP proxy applies it to upstream and catalog tools, and
// `toolselect rank/select --pins FILE` to catalogs.
//
// The pin file is JSON people can review and commit:
//
//	{"version":1,"tools":{"NAME":{"sha256":"…","description":"…","schema":"…","annotations":"…",
//	   "definition":{…},"flags":["bidi_controls"],
//	   "pending":{…the changed definition and its hashes…,"changed":["description"],"seen":1}}}}
//
// A definition is everything a client shows or a model reads of the tool:
// its name, title, description, input schema (with every parameter's
// description and title), output schema and annotations (safety, roles,
// capabilities and MCP hints, whose title is one more served text), each
// written as canonical JSON (keys sorted, no white space, numbers as
// written), so key order and white space never change a hash. The entry
// keeps the definition itself too, so a pending change can be shown as a
// diff. Approving a pending change is one command (`toolselect mcp pins
// approve NAME@SHA256 --pins FILE`, see [Pins.ApproveDefinition]) or an
// edit of the file: deleting a tool's entry pins it afresh on next sight
// (unless new tools are held for review, [Pins.CheckWith]).
//
// A file that was read and then vanishes (removed, renamed away) or no
// longer reads (unreadable, not a pin file, writable by its group or by
// everyone) is an error to [Pins.Reload] and [Pins.Save]: the pins read
// before stay in force and nothing is written until the file reads again;
// it is never taken for "no pins".
//
// A long-running user (the MCP proxy) shares the file with people and other
// processes: Reload picks up their edits, and Save merges (it writes only
// the entries changed here, and only where the file still has what they
// were changed from), so an approval or an edit made elsewhere is never
// overwritten. Every method is safe for concurrent use.
//
// The pins may be kept elsewhere than in a file ([OpenPins] with a
// [PinStore]: the MCP proxy's replicas share theirs in Redis): the rules
// above are the same whatever keeps them, the store only reads and writes
// entries.
type Pins struct {
	store PinStore
	mu    sync.Mutex
	file  pinFile
	// base holds, for each tool whose entry was changed here and not saved
	// yet, that entry as it was before the change (JSON; "null" when it had
	// none). Save and Reload keep a change only where the store still holds
	// its base; otherwise the store's entry wins.
	base map[string][]byte
	// edited is set when a read found content this Pins did not write; Reload
	// reports and clears it.
	edited bool
}

// LoadPins reads the pin file at path; a missing file is an empty set,
// created (readable and writable by its owner only) on the first Save. A
// file its group or everyone may write is refused (whoever can write it can
// approve any tool), as is one that is not a pin file.
func LoadPins(path string) (*Pins, error) {
	return OpenPins(&fileStore{path: path})
}

// OpenPins reads the pins kept in store. A store that cannot be read now
// (an error matching ErrPinStoreUnavailable: a server away) returns the
// Pins with that error: they start empty, Reload and Save fail until the
// store answers, and a caller holds what it cannot confirm meanwhile
// ([PinUnconfirmed]). Any other error returns no Pins.
func OpenPins(store PinStore) (*Pins, error) {
	p := &Pins{store: store, file: pinFile{Version: 1, Tools: map[string]*toolPin{}}, base: map[string][]byte{}}
	entries, _, err := store.Read(true)
	if errors.Is(err, ErrPinStoreUnavailable) {
		return p, err
	}
	if err != nil {
		return nil, err
	}
	if p.file.Tools, err = decodeEntries(entries, store.Where()); err != nil {
		return nil, err
	}
	return p, nil
}

// Path is the pin file's path, or what names another store (a redis:// URL
// without its password).
func (p *Pins) Path() string { return p.store.Where() }

// Flag is the command-line flag that names the store to toolselect mcp
// pins: "--pins FILE", or "--state URL" for a shared store.
func (p *Pins) Flag() string { return p.store.Flag() }

// Empty reports whether no tool is pinned (nor held for review) yet: the
// first pinning is still to come.
func (p *Pins) Empty() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.file.Tools) == 0
}
