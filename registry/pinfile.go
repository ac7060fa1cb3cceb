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

// Reload reads the pin file again if it changed since it was last read or
// written here (an approval, an edit), keeping the changes made here and not
// saved yet where the file did not change the same entries. It reports
// whether the file's content changed through someone else since the previous
// Reload, including changes Save found and merged meanwhile. A file that no
// longer reads as a pin file, no longer reads at all or is gone
// (ErrPinFileGone) is an error, and the pins stay as they were.
func (p *Pins) Reload() (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.reload(false)
	edited := p.edited
	p.edited = false
	return edited, err
}

// reload reads the file if its version differs from the one last read or
// written (always with force) and merges it with the unsaved changes. The
// caller holds p.mu.
func (p *Pins) reload(force bool) error {
	if !force {
		fi, err := os.Stat(p.path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("pins: %w", err)
		}
		if p.read.sameVersion(fi) {
			return nil
		}
	}
	disk, st, err := readPinFile(p.path)
	if err != nil {
		return err
	}
	if st.info == nil && p.read.info != nil {
		return fmt.Errorf("pins: %s: %w (removed or renamed away); the pins read before stay in force and nothing is written until it is back", p.path, ErrPinFileGone)
	}
	if (st.info == nil) == (p.read.info == nil) && st.sum == p.read.sum {
		p.read = st // the same content (touched, or rewritten as it was)
		return nil
	}
	for name, before := range p.base {
		if string(pinJSON(disk.Tools[name])) != string(before) {
			// The file changed this entry too: its version wins, and
			// the change made here is given up (Check again).
			delete(p.base, name)
			continue
		}
		if ours := p.file.Tools[name]; ours != nil {
			disk.Tools[name] = ours
		} else {
			delete(disk.Tools, name)
		}
	}
	p.file, p.read, p.edited = disk, st, true
	return nil
}

// pinJSON is an entry as Save would write it ("null" for none), to compare entries.
func pinJSON(pin *toolPin) []byte {
	b, _ := json.Marshal(pin)
	return b
}

// touch records name's entry as it is before a change made here (the
// first change since the last Save). The caller holds p.mu.
func (p *Pins) touch(name string) {
	if _, ok := p.base[name]; !ok {
		p.base[name] = pinJSON(p.file.Tools[name])
	}
}

// Save writes the changes made here to the pin file (atomically: a
// temporary file renamed over it), merged with the file as it is now: the
// file is read again, under a lock that other toolselect processes take
// too, and a change is written only where the file still holds the entry it
// was made from; an entry the file changed meanwhile (an approval, an edit)
// is kept as the file has it, and the change made here is given up (Check
// the tool again). With nothing to write, an existing file is left alone; a
// missing one is created. A file that no longer reads as a pin file is an
// error and is not overwritten.
func (p *Pins) Save() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	dir := filepath.Dir(p.path)
	unlock, err := lockDir(dir)
	if err != nil {
		return fmt.Errorf("pins: locking %s: %w", dir, err)
	}
	defer unlock()
	if err := p.reload(true); err != nil {
		return err
	}
	if len(p.base) == 0 && p.read.info != nil {
		return nil
	}
	b, err := json.MarshalIndent(p.file, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	tmp, err := os.CreateTemp(dir, ".pins-*.json")
	if err != nil {
		return fmt.Errorf("pins: %w", err)
	}
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("pins: %w", err)
	}
	if p.read.info != nil { // keep the file's permissions
		if err := tmp.Chmod(p.read.info.Mode().Perm()); err != nil {
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
	if err := os.Rename(tmp.Name(), p.path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("pins: %w", err)
	}
	p.read = fileState{info: fi, sum: sha256.Sum256(b)}
	clear(p.base)
	return nil
}
