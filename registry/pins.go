package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unicode"
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
//	   "flags":["bidi_controls"],"pending":{…the changed definition's hashes…,"changed":["description"]}}}}
//
// A definition is the tool's name, description, input schema and
// annotations (safety, roles, capabilities and MCP hints), each written as
// canonical JSON (keys sorted, no white space, numbers as written), so key
// order and white space never change a hash. Approving a pending change is
// one command (`toolselect mcp pins approve NAME --pins FILE`) or an edit of
// the file: deleting a tool's entry pins it afresh on next sight.
//
// A long-running user (the MCP proxy) shares the file with people and other
// processes: Reload picks up their edits, and Save merges (it writes only
// the entries changed here, and only where the file still has what they
// were changed from), so an approval or an edit made elsewhere is never
// overwritten. Every method is safe for concurrent use.
type Pins struct {
	path string
	mu   sync.Mutex
	file pinFile
	// base holds, for each tool whose entry was changed here and not saved
	// yet, that entry as it was before the change (JSON; "null" when it had
	// none). Save and Reload keep a change only where the file still holds
	// its base; otherwise the file's entry wins.
	base map[string][]byte
	// read is the file as last read or written here.
	read fileState
	// edited is set when a read found content this Pins did not write; Reload
	// reports and clears it.
	edited bool
}

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
	return os.SameFile(s.info, fi) && s.info.Size() == fi.Size() && s.info.ModTime().Equal(fi.ModTime())
}

type pinFile struct {
	Version int                 `json:"version"`
	Tools   map[string]*toolPin `json:"tools"`
}

// toolPin is one tool's pinned definition.
type toolPin struct {
	// SHA256 is the hash of the whole canonical definition.
	SHA256 string `json:"sha256"`
	// Description, Schema and Annotations are the hashes of the parts, so a
	// change can be named.
	Description string `json:"description"`
	Schema      string `json:"schema"`
	Annotations string `json:"annotations"`
	// Flags name what is suspicious in the definition's text (the FlagInvisible... constants).
	Flags []string `json:"flags,omitempty"`
	// Reviewed is set by an approval: the flags above were looked at, so a
	// strict check no longer holds the tool for them.
	Reviewed bool `json:"reviewed,omitempty"`
	// Pending is the changed definition seen since, waiting for approval.
	Pending *pendingPin `json:"pending,omitempty"`
}

// pendingPin is a changed definition held until approved.
type pendingPin struct {
	SHA256      string   `json:"sha256"`
	Description string   `json:"description"`
	Schema      string   `json:"schema"`
	Annotations string   `json:"annotations"`
	Flags       []string `json:"flags,omitempty"`
	// Changed names the parts that differ from the pin: description, schema, annotations.
	Changed []string `json:"changed"`
}

// PinStatus is the outcome of a pin check.
type PinStatus string

// The pin statuses.
const (
	// PinNew: first sight; the tool is pinned now (and allowed, unless a
	// strict check holds it for its flags).
	PinNew PinStatus = "new"
	// PinOK: the definition matches its pin.
	PinOK PinStatus = "ok"
	// PinChanged: the definition differs from its pin; the tool is held.
	PinChanged PinStatus = "changed"
)

// PinCheck is what Check says of one tool.
type PinCheck struct {
	Tool   string    `json:"tool"`
	Status PinStatus `json:"status"`
	// Changed names the parts that differ (PinChanged).
	Changed []string `json:"changed,omitempty"`
	// Flags name what is suspicious in the definition's text (description,
	// title, schema strings), on any status.
	Flags []string `json:"flags,omitempty"`
	// Held is true when the tool must not be served: changed, or flagged
	// under a strict check.
	Held bool `json:"held"`
}

// Message says why a held tool is held and how to approve it.
func (c PinCheck) Message(pinsPath string) string {
	switch {
	case c.Status == PinChanged:
		return fmt.Sprintf("tool %q changed since it was pinned (%s differ); it is held until approved: toolselect mcp pins approve %s --pins %s (or edit the pin file)",
			c.Tool, strings.Join(c.Changed, ", "), c.Tool, pinsPath)
	case c.Held:
		return fmt.Sprintf("tool %q is held: its description (or title or schema text) carries %s (strict descriptions); review it and approve: toolselect mcp pins approve %s --pins %s",
			c.Tool, strings.Join(c.Flags, ", "), c.Tool, pinsPath)
	}
	return ""
}

// The description flags.
const (
	// FlagInvisible: format characters (Unicode category Cf: zero-width
	// spaces and joiners, word joiners, tag characters, interlinear
	// annotation, musical formatting...), line and paragraph separators,
	// other default-ignorable code points (the combining grapheme joiner,
	// Hangul fillers), control characters other than tab and line breaks,
	// supplementary variation selectors, and two or more variation
	// selectors in a row (one after a character, as in an emoji, is fine).
	FlagInvisible   = "invisible_characters"
	FlagBidi        = "bidi_controls" // bidirectional overrides, embeddings, isolates and marks (Bidi_Control)
	FlagHTMLComment = "html_comment"  // <!-- ... --> hidden from rendered text
)

// descriptionFlags names what is suspicious in a text: what a person
// reviewing it would not see but a model reads.
func descriptionFlags(desc string) []string {
	var h hiddenText
	h.scan(desc)
	return h.flags()
}

// definitionFlags is descriptionFlags over every text of t a model or a
// client reads: its name, description and title, every string of its
// input schema (property names, descriptions, titles, enum values,
// defaults...) and of its MCP annotations.
func definitionFlags(t Tool) []string {
	var h hiddenText
	h.scan(t.Name)
	h.scan(t.Description)
	if title, ok := t.Metadata["title"].(string); ok {
		h.scan(title)
	}
	var schema any
	if json.Unmarshal(t.Parameters, &schema) == nil {
		h.scanJSON(schema)
	}
	if a, ok := t.Metadata["annotations"]; ok {
		var ann any
		if b, err := json.Marshal(a); err == nil && json.Unmarshal(b, &ann) == nil {
			h.scanJSON(ann)
		}
	}
	return h.flags()
}

// hiddenText collects what scan found.
type hiddenText struct{ invisible, bidi, comment bool }

func (h *hiddenText) flags() []string {
	var flags []string
	if h.invisible {
		flags = append(flags, FlagInvisible)
	}
	if h.bidi {
		flags = append(flags, FlagBidi)
	}
	if h.comment {
		flags = append(flags, FlagHTMLComment)
	}
	return flags
}

// scanJSON scans every string of a decoded JSON value, object keys included.
func (h *hiddenText) scanJSON(v any) {
	switch v := v.(type) {
	case string:
		h.scan(v)
	case []any:
		for _, x := range v {
			h.scanJSON(x)
		}
	case map[string]any:
		for k, x := range v {
			h.scan(k)
			h.scanJSON(x)
		}
	}
}

func (h *hiddenText) scan(s string) {
	if strings.Contains(s, "<!--") {
		h.comment = true
	}
	selectors, afterChar := 0, false
	for _, r := range s {
		if isVariationSelector(r) {
			// One after a character selects its form (an emoji's
			// presentation, a CJK variant); alone at the start or in a
			// run they select nothing and can encode hidden bytes.
			selectors++
			if selectors > 1 || !afterChar {
				h.invisible = true
			}
			continue
		}
		selectors, afterChar = 0, true
		switch {
		case unicode.Is(unicode.Bidi_Control, r):
			h.bidi = true
		case isInvisible(r):
			h.invisible = true
		}
	}
}

// isVariationSelector: the variation selectors of the BMP (U+FE00-FE0F)
// and Mongolian's free variation selectors.
func isVariationSelector(r rune) bool {
	return (r >= 0xFE00 && r <= 0xFE0F) || (r >= 0x180B && r <= 0x180D) || r == 0x180F
}

// isInvisible reports a character that renders as nothing (FlagInvisible);
// bidirectional controls are checked before it.
func isInvisible(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r):
		return true
	case unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
		return true // U+034F, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, unassigned tags...
	case r >= 0xE0100 && r <= 0xE01EF:
		return true // the supplementary variation selectors
	}
	return false
}

// LoadPins reads the pin file at path; a missing file is an empty set,
// created on the first Save.
func LoadPins(path string) (*Pins, error) {
	file, st, err := readPinFile(path)
	if err != nil {
		return nil, err
	}
	return &Pins{path: path, file: file, read: st, base: map[string][]byte{}}, nil
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
	if file.Tools == nil {
		file.Tools = map[string]*toolPin{}
	}
	return file, fileState{info: fi, sum: sha256.Sum256(b)}, nil
}

// Reload reads the pin file again if it changed since it was last read or
// written here (an approval, an edit), keeping the changes made here and not
// saved yet where the file did not change the same entries. It reports
// whether the file's content changed through someone else since the previous
// Reload, including changes Save found and merged meanwhile. A file that no
// longer reads as a pin file is an error, and the pins stay as they were.
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

// Path is the pin file's path.
func (p *Pins) Path() string { return p.path }

// hashes are a definition's part and whole hashes.
type hashes struct{ whole, desc, schema, ann string }

// definitionHashes hashes t's canonical definition.
func definitionHashes(t Tool) (hashes, error) {
	canon := func(v any) (string, []byte, error) {
		b, err := canonicalJSON(v)
		if err != nil {
			return "", nil, err
		}
		s := sha256.Sum256(b)
		return hex.EncodeToString(s[:]), b, nil
	}
	var h hashes
	var err error
	var db, sb, ab []byte
	if h.desc, db, err = canon(t.Description); err != nil {
		return h, err
	}
	var schema any
	if len(bytes.TrimSpace(t.Parameters)) > 0 {
		schema = json.RawMessage(t.Parameters)
	}
	if h.schema, sb, err = canon(schema); err != nil {
		return h, fmt.Errorf("the input schema: %w", err)
	}
	ann := map[string]any{"safe": t.Safe, "roles": t.Roles, "capabilities": t.Capabilities}
	if a, ok := t.Metadata["annotations"]; ok {
		ann["mcp"] = a
	}
	if h.ann, ab, err = canon(ann); err != nil {
		return h, fmt.Errorf("the annotations: %w", err)
	}
	nb, _ := json.Marshal(t.Name)
	whole := sha256.Sum256(bytes.Join([][]byte{nb, db, sb, ab}, []byte{'\n'}))
	h.whole = hex.EncodeToString(whole[:])
	return h, nil
}

// canonicalJSON writes v with object keys sorted and no white space; numbers
// keep their text.
func canonicalJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	return json.Marshal(x) // maps marshal with sorted keys
}

// Check checks t against its pin: a tool seen for the first time is pinned
// (and the file marked for saving), a matching one is OK, a changed one is
// recorded as pending and held. With strict, a tool whose description
// carries a flag is held even on first sight. It reports whether the pin file
// changed (Save it).
func (p *Pins) Check(t Tool, strict bool) (PinCheck, bool, error) {
	h, err := definitionHashes(t)
	if err != nil {
		return PinCheck{Tool: t.Name}, false, fmt.Errorf("pins: tool %q: %w", t.Name, err)
	}
	flags := definitionFlags(t)
	c := PinCheck{Tool: t.Name, Flags: flags}
	p.mu.Lock()
	defer p.mu.Unlock()
	pin := p.file.Tools[t.Name]
	switch {
	case pin == nil:
		p.touch(t.Name)
		p.file.Tools[t.Name] = &toolPin{SHA256: h.whole, Description: h.desc, Schema: h.schema, Annotations: h.ann, Flags: flags}
		c.Status, c.Held = PinNew, strict && len(flags) > 0
		return c, true, nil
	case pin.SHA256 == h.whole:
		c.Status, c.Held = PinOK, strict && len(flags) > 0 && !pin.approvedFlags(flags)
		if pin.Pending == nil {
			return c, false, nil
		}
		p.touch(t.Name)
		pin.Pending = nil // the definition came back to its pin
		return c, true, nil
	}
	var parts []string
	if pin.Description != h.desc {
		parts = append(parts, "description")
	}
	if pin.Schema != h.schema {
		parts = append(parts, "schema")
	}
	if pin.Annotations != h.ann {
		parts = append(parts, "annotations")
	}
	if len(parts) == 0 {
		parts = []string{"name"}
	}
	c.Status, c.Changed, c.Held = PinChanged, parts, true
	pending := &pendingPin{SHA256: h.whole, Description: h.desc, Schema: h.schema, Annotations: h.ann, Flags: flags, Changed: parts}
	if pin.Pending != nil && pin.Pending.SHA256 == pending.SHA256 {
		return c, false, nil
	}
	p.touch(t.Name)
	pin.Pending = pending
	return c, true, nil
}

// approvedFlags: flags already in the pin were reviewed with it (an approval
// keeps them), so a strict check does not hold the tool again for them.
func (pin *toolPin) approvedFlags(flags []string) bool {
	for _, f := range flags {
		found := false
		for _, g := range pin.Flags {
			found = found || f == g
		}
		if !found {
			return false
		}
	}
	return pin.Reviewed
}

// Approve makes each named tool's pending definition its pin (and marks a
// flagged pin as reviewed). It returns the names it did not find with
// anything to approve.
func (p *Pins) Approve(names ...string) (missing []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range names {
		pin := p.file.Tools[n]
		switch {
		case pin == nil:
			missing = append(missing, n)
		case pin.Pending != nil:
			p.touch(n)
			d := pin.Pending
			*pin = toolPin{SHA256: d.SHA256, Description: d.Description, Schema: d.Schema, Annotations: d.Annotations, Flags: d.Flags, Reviewed: true}
		case len(pin.Flags) > 0 && !pin.Reviewed:
			p.touch(n)
			pin.Reviewed = true
		default:
			missing = append(missing, n)
		}
	}
	return missing
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

// Waiting lists, by name, the tools an approval would change: each with a
// pending changed definition (Status PinChanged, Held, the parts Changed
// and the new definition's Flags), and each pinned with flags not yet
// reviewed (Status PinOK, its Flags, Held false: a check holds it only
// when strict). Approve accepts exactly these.
func (p *Pins) Waiting() []PinCheck {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []PinCheck
	for n, pin := range p.file.Tools {
		switch {
		case pin.Pending != nil:
			out = append(out, PinCheck{Tool: n, Status: PinChanged, Changed: pin.Pending.Changed, Flags: pin.Pending.Flags, Held: true})
		case len(pin.Flags) > 0 && !pin.Reviewed:
			out = append(out, PinCheck{Tool: n, Status: PinOK, Flags: pin.Flags})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out
}
