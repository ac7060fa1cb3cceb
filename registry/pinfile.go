package registry

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolselect/toolselect/internal/strictjson"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/toolselect/toolselect/internal/fileperm"
)

// fileState identifies one version of the pin file.
type fileState struct {
	info os.FileInfo // nil: there was no file
	sum  [sha256.Size]byte
}

// sameVersion reports whether fi (nil: no file) is still the version s was read from.
func (s fileState) sameVersion(fi os.FileInfo) bool {
	if s.info == nil || fi == nil {
		return s.info == nil && fi == nil
	}
	return os.SameFile(s.info, fi) && s.info.Size() == fi.Size() && s.info.ModTime().Equal(fi.ModTime()) &&
		s.info.Mode() == fi.Mode() // a chmod is looked at too (fileperm.Check)
}

// pinFile is the file's content. Tools holds every entry under its key
// ([PinCheck.Key]): a tool's name, or a prompt's or resource's kind and name, which
// the file keeps in maps of their own ("prompts", "resources",
// "resourceTemplates").
type pinFile struct {
	Version int
	Tools   map[string]*toolPin
}

var pinKindMaps = map[string]string{PinPrompt: "prompts", PinResource: "resources", PinResourceTemplate: "resourceTemplates"}

// keySep joins a kind and a name into a key; tool names hold no control character.
const keySep = "\x00"

// pinKey is the name a prompt, resource or resource template (kind, one of
// the Pin... kinds; "" for a tool) is pinned and checked under
// ([PinCheck.Key]): check it as a Tool of this name.
func pinKey(kind, name string) string {
	if kind == "" {
		return name
	}
	return kind + keySep + name
}

// splitPinKey is the inverse of pinKey.
func splitPinKey(key string) (kind, name string) {
	if k, n, ok := strings.Cut(key, keySep); ok {
		return k, n
	}
	return "", key
}

func (f pinFile) MarshalJSON() ([]byte, error) {
	out := map[string]any{"version": f.Version}
	maps := map[string]map[string]*toolPin{"tools": {}}
	for key, pin := range f.Tools {
		kind, name := splitPinKey(key)
		m := "tools"
		if kind != "" {
			m = pinKindMaps[kind]
		}
		if maps[m] == nil {
			maps[m] = map[string]*toolPin{}
		}
		maps[m][name] = pin
	}
	for m, entries := range maps {
		out[m] = entries
	}
	return json.Marshal(out)
}

func (f *pinFile) UnmarshalJSON(b []byte) error {
	var raw struct {
		Version           int                 `json:"version"`
		Tools             map[string]*toolPin `json:"tools"`
		Prompts           map[string]*toolPin `json:"prompts"`
		Resources         map[string]*toolPin `json:"resources"`
		ResourceTemplates map[string]*toolPin `json:"resourceTemplates"`
	}
	// "Tools" beside "tools", or a pin given twice, is two files in one:
	// which one a reader trusts is not guessed (strictjson). A key no
	// field has is left, as a newer toolselect may write one.
	if err := strictjson.UnmarshalKnown(b, &raw); err != nil {
		return err
	}
	f.Version, f.Tools = raw.Version, map[string]*toolPin{}
	for kind, m := range map[string]map[string]*toolPin{"": raw.Tools, PinPrompt: raw.Prompts, PinResource: raw.Resources, PinResourceTemplate: raw.ResourceTemplates} {
		for name, pin := range m {
			if strings.Contains(name, keySep) || pin == nil {
				return fmt.Errorf("the entry %q is not a pin", name)
			}
			f.Tools[pinKey(kind, name)] = pin
		}
	}
	return nil
}

// decodeEntries reads a store's entries (key to the entry as JSON).
func decodeEntries(entries map[string][]byte, where string) (map[string]*toolPin, error) {
	out := make(map[string]*toolPin, len(entries))
	for key, b := range entries {
		var pin *toolPin
		if err := json.Unmarshal(b, &pin); err != nil || pin == nil {
			kind, name := splitPinKey(key)
			return nil, fmt.Errorf("pins: %s: the entry %q is not a pin: %w", where, pinKey(kind, name), notAPin(err))
		}
		out[key] = pin
	}
	return out, nil
}

// readPinFile reads and checks the pin file at path (a missing file is an
// empty one) and says which version of it was read.
func readPinFile(path string) (pinFile, fileState, error) {
	file := pinFile{Version: 1, Tools: map[string]*toolPin{}}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return file, fileState{}, nil
	}
	if err != nil {
		return file, fileState{}, fmt.Errorf("pins: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil {
		err = fileperm.Check(path, fi)
	}
	if err != nil {
		return file, fileState{}, fmt.Errorf("pins: %w", err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return file, fileState{}, fmt.Errorf("pins: %w", err)
	}
	if err := json.Unmarshal(b, &file); err != nil {
		return file, fileState{}, fmt.Errorf("pins: %s is not a pin file: %w", path, err)
	}
	if file.Version != 1 {
		return file, fileState{}, fmt.Errorf("pins: %s has version %d; this toolselect reads version 1", path, file.Version)
	}
	return file, fileState{info: fi, sum: sha256.Sum256(b)}, nil
}

// fileStore is the pin file: a [PinStore] for one machine's processes.
type fileStore struct {
	path string
	// read is the file as last read or written here.
	read fileState
	// loaded: the file was read once (read.info is nil for a missing file).
	loaded bool
}

// Where implements PinStore: the file's path.
func (s *fileStore) Where() string { return s.path }

// Flag implements PinStore.
func (s *fileStore) Flag() string { return "--pins " + s.path }

// entries are a pin file's entries as a store hands them over.
func entries(f pinFile) map[string][]byte {
	out := make(map[string][]byte, len(f.Tools))
	for k, pin := range f.Tools {
		out[k] = pinJSON(pin)
	}
	return out
}

// gone is the error of a file read before and now gone.
func (s *fileStore) gone() error {
	return fmt.Errorf("pins: %s: %w (removed or renamed away); the pins read before stay in force and nothing is written until it is back", s.path, ErrPinFileGone)
}

// Read implements PinStore: the file is read again when its version (its
// identity, size, time and mode) differs from the one last read or
// written, or with force. A file that was read and is now gone is
// ErrPinFileGone.
func (s *fileStore) Read(force bool) (map[string][]byte, bool, error) {
	if !force && s.loaded {
		fi, err := os.Stat(s.path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, false, fmt.Errorf("pins: %w", err)
		}
		if s.read.sameVersion(fi) {
			return nil, false, nil
		}
	}
	disk, st, err := readPinFile(s.path)
	if err != nil {
		return nil, false, err
	}
	if st.info == nil && s.read.info != nil {
		return nil, false, s.gone()
	}
	changed := !s.loaded || (st.info == nil) != (s.read.info == nil) || st.sum != s.read.sum
	s.read, s.loaded = st, true
	return entries(disk), changed, nil
}

// Commit implements PinStore: under a lock on the file's directory, which
// every toolselect process saving a pin file there takes too, the file is
// read again, each change applied where the file still holds its Old, and
// the result written atomically (a temporary file renamed over it). With
// nothing to write an existing file is left alone; a missing one is
// created.
func (s *fileStore) Commit(changes []PinChange) (map[string][]byte, bool, error) {
	dir := filepath.Dir(s.path)
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, false, fmt.Errorf("pins: locking %s: %w", dir, err)
	}
	defer unlock()
	disk, st, err := readPinFile(s.path)
	if err != nil {
		return nil, false, err
	}
	if st.info == nil && s.read.info != nil {
		return nil, false, s.gone()
	}
	changed := (st.info == nil) != (s.read.info == nil) || st.sum != s.read.sum
	applied := 0
	for _, c := range changes {
		if string(pinJSON(disk.Tools[c.Key])) != string(orNull(c.Old)) {
			changed = true // changed meanwhile: the file's entry wins
			continue
		}
		applied++
		if c.New == nil {
			delete(disk.Tools, c.Key)
			continue
		}
		var pin *toolPin
		if err := json.Unmarshal(c.New, &pin); err != nil || pin == nil {
			return nil, false, fmt.Errorf("pins: the entry %q is not a pin: %w", c.Key, notAPin(err))
		}
		disk.Tools[c.Key] = pin
	}
	if applied == 0 && st.info != nil {
		s.read = st
		return entries(disk), changed, nil
	}
	b, err := json.MarshalIndent(disk, "", "  ")
	if err != nil {
		return nil, false, err
	}
	b = append(b, '\n')
	tmp, err := os.CreateTemp(dir, ".pins-*.json")
	if err != nil {
		return nil, false, fmt.Errorf("pins: %w", err)
	}
	fail := func(err error) (map[string][]byte, bool, error) {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, false, fmt.Errorf("pins: %w", err)
	}
	if st.info != nil { // keep the file's permissions
		if err := tmp.Chmod(st.info.Mode().Perm()); err != nil {
			return fail(err)
		}
	}
	if _, err := tmp.Write(b); err != nil {
		return fail(err)
	}
	fi, err := tmp.Stat()
	if err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		os.Remove(tmp.Name())
		return nil, false, fmt.Errorf("pins: %w", err)
	}
	s.read, s.loaded = fileState{info: fi, sum: sha256.Sum256(b)}, true
	return entries(disk), changed, nil
}

// notAPin is why an entry did not decode as a pin (err, or JSON null).
func notAPin(err error) error {
	if err == nil {
		return errors.New("it is null")
	}
	return err
}

// orNull is an entry's JSON as pinJSON writes it: "null" for none.
func orNull(b []byte) []byte {
	if b == nil {
		return []byte("null")
	}
	return b
}

// Reload reads the pins again if the store changed since they were last
// read or written here (an approval, an edit), keeping the changes made
// here and not saved yet where the store did not change the same entries.
// It reports whether the store's content changed through someone else
// since the previous Reload, including changes Save found and merged
// meanwhile. A store that no longer reads (a pin file gone:
// ErrPinFileGone, unreadable or no longer a pin file; a server away:
// ErrPinStoreUnavailable) is an error, and the pins stay as they were.
func (p *Pins) Reload() (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.reload()
	edited := p.edited
	p.edited = false
	return edited, err
}

// reload reads the store if it changed and merges it with the unsaved
// changes. The caller holds p.mu.
func (p *Pins) reload() error {
	stored, changed, err := p.store.Read(false)
	if errors.Is(err, ErrPinStoreReset) {
		// The store lost what it held (a server restarted without its
		// data): everything known here is written again on the next Save.
		for key := range p.file.Tools {
			p.base[key] = []byte("null")
		}
		return err
	}
	if err != nil || !changed {
		return err
	}
	return p.merge(stored)
}

// merge takes the store's entries, keeping each change made here whose
// entry the store still holds as it was before the change. The caller
// holds p.mu.
func (p *Pins) merge(stored map[string][]byte) error {
	tools, err := decodeEntries(stored, p.store.Where())
	if err != nil {
		return err
	}
	for name, before := range p.base {
		if string(orNull(stored[name])) != string(before) {
			// The store changed this entry too: its version wins, and
			// the change made here is given up (Check again).
			delete(p.base, name)
			continue
		}
		if ours := p.file.Tools[name]; ours != nil {
			tools[name] = ours
		} else {
			delete(tools, name)
		}
	}
	p.file.Tools, p.edited = tools, true
	return nil
}

// pinJSON is an entry as Save would write it ("null" for none), to compare entries.
func pinJSON(pin *toolPin) []byte {
	b, _ := json.Marshal(pin)
	return b
}

// Unsaved reports whether the entry key ([PinCheck.Key]) was changed here
// (pinned, held, approved) and not written to the store yet: what the
// store holds of it is not confirmed.
func (p *Pins) Unsaved(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.base[key]
	return ok
}

// touch records name's entry as it is before a change made here (the
// first change since the last Save). The caller holds p.mu.
func (p *Pins) touch(name string) {
	if _, ok := p.base[name]; !ok {
		p.base[name] = pinJSON(p.file.Tools[name])
	}
}

// Save writes the changes made here to the store, merged with the store as
// it is now: a change is written only where the store still holds the
// entry it was made from, atomically with the others (a pin file is read
// again and rewritten under a lock other toolselect processes take too; a
// shared store compares and sets in one step); an entry the store changed
// meanwhile (an approval, an edit) is kept as the store has it, and the
// change made here is given up (Check the tool again). With nothing to
// write, an existing file is left alone; a missing one is created. A store
// that no longer reads is an error and is not overwritten.
func (p *Pins) Save() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	changes := make([]PinChange, 0, len(p.base))
	for key, before := range p.base {
		c := PinChange{Key: key}
		if string(before) != "null" {
			c.Old = before
		}
		if pin := p.file.Tools[key]; pin != nil {
			c.New = pinJSON(pin)
		}
		changes = append(changes, c)
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Key < changes[j].Key })
	stored, changed, err := p.store.Commit(changes)
	if err != nil {
		return err
	}
	tools, err := decodeEntries(stored, p.store.Where())
	if err != nil {
		return err
	}
	p.file.Tools = tools
	p.edited = p.edited || changed
	clear(p.base)
	return nil
}
