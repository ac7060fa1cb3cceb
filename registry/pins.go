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
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/toolselect/toolselect/internal/fileperm"
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
func splitpinKey(key string) (kind, name string) {
	if k, n, ok := strings.Cut(key, keySep); ok {
		return k, n
	}
	return "", key
}

func (f pinFile) MarshalJSON() ([]byte, error) {
	out := map[string]any{"version": f.Version}
	maps := map[string]map[string]*toolPin{"tools": {}}
	for key, pin := range f.Tools {
		kind, name := splitpinKey(key)
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
	if err := json.Unmarshal(b, &raw); err != nil {
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

// toolPin is one tool's pinned definition.
type toolPin struct {
	// SHA256 is the hash of the whole canonical definition.
	SHA256 string `json:"sha256"`
	// Description, Schema, Annotations, Title and OutputSchema are the
	// hashes of the parts, so a change can be named (Title and OutputSchema
	// are empty for a tool without them).
	Description  string `json:"description"`
	Schema       string `json:"schema"`
	Annotations  string `json:"annotations"`
	Title        string `json:"title,omitempty"`
	OutputSchema string `json:"outputSchema,omitempty"`
	// Definition is the pinned definition itself (canonical JSON), to show
	// what a pending change changes; absent in pins written before it was
	// kept.
	Definition json.RawMessage `json:"definition,omitempty"`
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
	SHA256       string          `json:"sha256"`
	Description  string          `json:"description"`
	Schema       string          `json:"schema"`
	Annotations  string          `json:"annotations"`
	Title        string          `json:"title,omitempty"`
	OutputSchema string          `json:"outputSchema,omitempty"`
	Definition   json.RawMessage `json:"definition,omitempty"`
	Flags        []string        `json:"flags,omitempty"`
	// Changed names the parts that differ from the pin: description,
	// schema, annotations, title, output schema (or name); "new" for a tool
	// held for review on first sight.
	Changed []string `json:"changed"`
	// Seen counts the different definitions that waited since the pin (1:
	// only this one), so an approval by name alone cannot approve one that
	// arrived after the person looked.
	Seen int `json:"seen,omitempty"`
}

// seen is p's count of waiting definitions (0 in files written before it was kept: one).
func (p *pendingPin) seen() int { return max(p.Seen, 1) }

// pinOf is the pin an approval makes of d.
func (d *pendingPin) pinOf() toolPin {
	return toolPin{SHA256: d.SHA256, Description: d.Description, Schema: d.Schema, Annotations: d.Annotations,
		Title: d.Title, OutputSchema: d.OutputSchema, Definition: d.Definition, Flags: d.Flags, Reviewed: true}
}

// PinStatus is the outcome of a pin check.
type PinStatus string

// The pin statuses, and the kinds of definitions pinned besides tools.
const (
	// PinNew: first sight; the tool is pinned now (and allowed, unless a
	// strict check holds it for its flags).
	PinNew PinStatus = "new"
	// PinOK: the definition matches its pin.
	PinOK PinStatus = "ok"
	// PinChanged: the definition differs from its pin; the tool is held.
	PinChanged PinStatus = "changed"
	// PinUnreviewed: a tool first seen after the first pinning while new
	// tools are held for review (CheckWith's holdNew); held until approved.
	PinUnreviewed PinStatus = "unreviewed"

	// The kinds of definitions pinned besides tools ([PinCheck.Kind]).
	PinPrompt           = "prompt"
	PinResource         = "resource"
	PinResourceTemplate = "resourceTemplate"
)

// PinCheck is what Check says of one tool.
type PinCheck struct {
	// Tool is the tool's name (the prompt's name, the resource's URI, the
	// resource template's URI template).
	Tool string `json:"tool"`
	// Kind is PinPrompt, PinResource or PinResourceTemplate; empty for a tool.
	Kind   string    `json:"kind,omitempty"`
	Status PinStatus `json:"status"`
	// Changed names the parts that differ (PinChanged).
	Changed []string `json:"changed,omitempty"`
	// Flags name what is suspicious in the definition's text (description,
	// title, schema strings), on any status.
	Flags []string `json:"flags,omitempty"`
	// Held is true when the tool must not be served: changed, new under
	// review, or flagged under a strict check.
	Held bool `json:"held"`
	// SHA256 is the hash of the definition an approval would accept (the
	// pending one; the pin's for a flagged pin): approve NAME@SHA256.
	SHA256 string `json:"sha256,omitempty"`
	// Pinned, Pending and Seen are set by Waiting, for a person to review:
	// the approved definition (canonical JSON; absent for a tool held for
	// review on first sight and in pins written before definitions were
	// kept), the definition waiting (absent for a flagged pin waiting for
	// review: Pinned is the one to review), and how many different
	// definitions waited since the pin.
	Pinned  json.RawMessage `json:"pinned,omitempty"`
	Pending json.RawMessage `json:"pending,omitempty"`
	Seen    int             `json:"seen,omitempty"`
}

// newPinCheck is the check of the entry key ([PinCheck.Key]).
func newPinCheck(key string) PinCheck {
	kind, name := splitpinKey(key)
	return PinCheck{Tool: name, Kind: kind}
}

// Key is the key c's entry is pinned under ([PinCheck.Key]).
func (c PinCheck) Key() string { return pinKey(c.Kind, c.Tool) }

// what names the entry in messages: tool "x", prompt "y"...
func (c PinCheck) what() string {
	kind := map[string]string{"": "tool", PinPrompt: "prompt", PinResource: "resource", PinResourceTemplate: "resource template"}[c.Kind]
	return fmt.Sprintf("%s %q", kind, c.Tool)
}

// Message says why a held tool is held and how to approve it.
func (c PinCheck) Message(pinsPath string) string {
	switch {
	case c.Status == PinChanged:
		return fmt.Sprintf("%s changed since it was pinned (%s differ); it is held until approved: toolselect mcp pins approve %s --pins %s (or edit the pin file)",
			c.what(), strings.Join(c.Changed, ", "), c.ApproveArg(), pinsPath)
	case c.Status == PinUnreviewed:
		return fmt.Sprintf("%s is new since the first pinning; it is held until reviewed and approved: toolselect mcp pins approve %s --pins %s",
			c.what(), c.ApproveArg(), pinsPath)
	case c.Held:
		return fmt.Sprintf("%s is held: its name, description, title or schema text carries %s (strict descriptions); review it and approve: toolselect mcp pins approve %s --pins %s",
			c.what(), strings.Join(c.Flags, ", "), c.ApproveArg(), pinsPath)
	}
	return ""
}

// ApproveArg is what "toolselect mcp pins approve" takes to approve exactly
// this definition: NAME@SHA256, with "KIND:" before the name of a prompt
// or resource (ParseApproveArg reads it back).
func (c PinCheck) ApproveArg() string {
	s := c.Tool
	if c.Kind != "" {
		s = c.Kind + ":" + s
	}
	if c.SHA256 != "" {
		s += "@" + c.SHA256
	}
	return s
}

// The description flags.
const (
	// FlagInvisible: format characters (Unicode category Cf: zero-width
	// spaces and joiners, word joiners, tag characters, interlinear
	// annotation, musical formatting...), line and paragraph separators,
	// other default-ignorable code points (the combining grapheme joiner,
	// Hangul fillers), control characters other than tab and line breaks,
	// supplementary variation selectors, and two or more variation
	// selectors in a row (one after a character, as in an emoji, is fine),
	// and the blank-looking U+2800 (braille pattern blank).
	FlagInvisible   = "invisible_characters"
	FlagBidi        = "bidi_controls" // bidirectional overrides, embeddings, isolates and marks (Bidi_Control)
	FlagHTMLComment = "html_comment"  // <!-- ... --> hidden from rendered text
	// FlagBlankLines: a run of blankRunLimit or more blank lines, which
	// pushes what follows out of a reviewer's view.
	FlagBlankLines = "blank_lines"
	// FlagConfusableName: the tool's name mixes scripts (Latin with
	// Cyrillic, Greek...) or holds a letter made to look like an ASCII one
	// (Cyrillic "а" in "reаd_file", fullwidth or mathematical letters), so
	// it can pass for another tool's name.
	FlagConfusableName = "confusable_name"
)

// blankRunLimit is how many blank lines in a row are flagged (FlagBlankLines):
// prose separates paragraphs by one, rarely two.
const blankRunLimit = 3

// descriptionFlags names what is suspicious in a text: what a person
// reviewing it would not see but a model reads.
func descriptionFlags(desc string) []string { return (*Pins)(nil).TextFlags(desc) }

// TextFlags names what is suspicious in texts that are not pinned but that
// a model reads (the Flag... constants but FlagConfusableName): hidden
// characters, HTML comments, long runs of blank lines. The MCP proxy
// scans the messages of the prompts it serves with it. It does not use p,
// which may be nil.
func (*Pins) TextFlags(texts ...string) []string {
	var h hiddenText
	for _, s := range texts {
		h.scan(s)
	}
	return h.flags()
}

// definitionFlags is descriptionFlags over every text of t a model or a
// client reads: its name (confusable too), description and title, every
// string of its input and output schemas (property names, descriptions,
// titles, enum values, defaults...) and of its MCP annotations.
func definitionFlags(t Tool) []string {
	var h hiddenText
	_, name := splitpinKey(t.Name)
	h.scan(name)
	h.confusable = confusableName(name)
	h.scan(t.Description)
	if title, ok := t.Metadata["title"].(string); ok {
		h.scan(title)
	}
	var schema any
	if json.Unmarshal(t.Parameters, &schema) == nil {
		h.scanJSON(schema)
	}
	for _, key := range []string{"outputSchema", "annotations"} {
		if a, ok := t.Metadata[key]; ok {
			var v any
			if b, err := json.Marshal(a); err == nil && json.Unmarshal(b, &v) == nil {
				h.scanJSON(v)
			}
		}
	}
	return h.flags()
}

// hiddenText collects what scan found.
type hiddenText struct{ invisible, bidi, comment, blank, confusable bool }

func (h *hiddenText) flags() []string {
	var flags []string
	for _, f := range []struct {
		on   bool
		flag string
	}{{h.invisible, FlagInvisible}, {h.bidi, FlagBidi}, {h.comment, FlagHTMLComment}, {h.blank, FlagBlankLines}, {h.confusable, FlagConfusableName}} {
		if f.on {
			flags = append(flags, f.flag)
		}
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
	if blankRun(s) >= blankRunLimit {
		h.blank = true
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

// blankRun is the longest run of blank lines in s (lines of white space
// or blank-looking characters only; "\r\n" counts as one line break).
func blankRun(s string) int {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	longest, run := 0, 0
	for i, l := range lines {
		if i == 0 || i == len(lines)-1 {
			continue // the text's own start and end, not lines between text
		}
		if strings.TrimFunc(l, func(r rune) bool { return unicode.IsSpace(r) || r == brailleBlank || isInvisible(r) }) == "" {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// brailleBlank (U+2800) renders as nothing yet is neither white space nor a
// format character.
const brailleBlank = '\u2800'

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
	case r == brailleBlank:
		return true
	}
	return false
}

// LoadPins reads the pin file at path; a missing file is an empty set,
// created (readable and writable by its owner only) on the first Save. A
// file its group or everyone may write is refused (whoever can write it can
// approve any tool), as is one that is not a pin file.
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

// Path is the pin file's path.
func (p *Pins) Path() string { return p.path }

// hashes are a definition's part and whole hashes, and the definition
// itself (canonical JSON).
type hashes struct {
	whole, desc, schema, ann, title, output string
	def                                     json.RawMessage
}

// definitionHashes hashes t's canonical definition. A tool without a title
// and an output schema hashes as it did before they were pinned, so only
// tools with them are held once (their pins lack the parts).
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
	var db, sb, ab, tb, ob []byte
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
	doc := map[string]any{"name": t.Name, "description": t.Description, "inputSchema": schema, "annotations": ann}
	if kind, name := splitpinKey(t.Name); kind != "" {
		// A prompt's arguments, a resource's URI and MIME type, as the caller put them.
		doc = map[string]any{"kind": kind, "name": name, "description": t.Description, "definition": schema}
	}
	parts := [][]byte{nil, db, sb, ab}
	parts[0], _ = json.Marshal(t.Name)
	title, _ := t.Metadata["title"].(string)
	output := t.Metadata["outputSchema"]
	if title != "" || output != nil {
		if title != "" {
			doc["title"] = title
			if h.title, tb, err = canon(title); err != nil {
				return h, err
			}
		}
		if output != nil {
			doc["outputSchema"] = output
			if h.output, ob, err = canon(output); err != nil {
				return h, fmt.Errorf("the output schema: %w", err)
			}
		}
		parts = append(parts, tb, ob)
	}
	whole := sha256.Sum256(bytes.Join(parts, []byte{'\n'}))
	h.whole = hex.EncodeToString(whole[:])
	if h.def, err = canonicalJSON(doc); err != nil {
		return h, err
	}
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

// Check is CheckWith(t, strict, false).
func (p *Pins) Check(t Tool, strict bool) (PinCheck, bool, error) {
	return p.CheckWith(t, strict, false)
}

// CheckWith checks t against its pin: a tool seen for the first time is
// pinned (and the file marked for saving), a matching one is OK, a changed
// one is recorded as pending and held. With strict, a tool whose definition
// carries a flag is held even on first sight. With holdNew (for tools that
// appear after the first pinning), a tool seen for the first time is held
// for review (PinUnreviewed) instead of pinned; an entry held so stays held
// until approved, whatever later checks say of new tools. It reports
// whether the pin file changed (Save it).
func (p *Pins) CheckWith(t Tool, strict, holdNew bool) (PinCheck, bool, error) {
	h, err := definitionHashes(t)
	if err != nil {
		c := newPinCheck(t.Name)
		return c, false, fmt.Errorf("pins: %s: %w", c.what(), err)
	}
	flags := definitionFlags(t)
	c := newPinCheck(t.Name)
	c.Flags, c.SHA256 = flags, h.whole
	pending := &pendingPin{SHA256: h.whole, Description: h.desc, Schema: h.schema, Annotations: h.ann,
		Title: h.title, OutputSchema: h.output, Definition: h.def, Flags: flags, Seen: 1}
	p.mu.Lock()
	defer p.mu.Unlock()
	pin := p.file.Tools[t.Name]
	switch {
	case pin == nil && holdNew:
		p.touch(t.Name)
		pending.Changed = []string{"new"}
		p.file.Tools[t.Name] = &toolPin{Pending: pending}
		c.Status, c.Changed, c.Held = PinUnreviewed, pending.Changed, true
		return c, true, nil
	case pin == nil:
		p.touch(t.Name)
		np := pending.pinOf()
		np.Reviewed = false
		p.file.Tools[t.Name] = &np
		c.Status, c.Held = PinNew, strict && len(flags) > 0
		return c, true, nil
	case pin.SHA256 == "": // held for review since its first sight
		c.Status, c.Changed, c.Held = PinUnreviewed, []string{"new"}, true
		pending.Changed = c.Changed
	case pin.SHA256 == h.whole:
		c.Status, c.Held = PinOK, strict && len(flags) > 0 && !pin.approvedFlags(flags)
		if pin.Pending == nil {
			return c, false, nil
		}
		p.touch(t.Name)
		pin.Pending = nil // the definition came back to its pin
		return c, true, nil
	default:
		c.Status, c.Changed, c.Held = PinChanged, pin.changedParts(h), true
		pending.Changed = c.Changed
	}
	if pin.Pending != nil && pin.Pending.SHA256 == pending.SHA256 {
		return c, false, nil
	}
	if pin.Pending != nil {
		pending.Seen = pin.Pending.seen() + 1
	}
	p.touch(t.Name)
	pin.Pending = pending
	return c, true, nil
}

// changedParts names the parts of h that differ from the pin.
func (pin *toolPin) changedParts(h hashes) []string {
	var parts []string
	for _, d := range []struct{ name, pinned, now string }{
		{"description", pin.Description, h.desc}, {"schema", pin.Schema, h.schema}, {"annotations", pin.Annotations, h.ann},
		{"title", pin.Title, h.title}, {"output schema", pin.OutputSchema, h.output},
	} {
		if d.pinned != d.now {
			parts = append(parts, d.name)
		}
	}
	if len(parts) == 0 {
		parts = []string{"name"}
	}
	return parts
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

// waiting is what an approval of pin would accept: the pending definition,
// or the pin itself when its flags were not reviewed; nil when nothing waits.
func (pin *toolPin) waiting() (sha string, seen int, ok bool) {
	switch {
	case pin == nil:
		return "", 0, false
	case pin.Pending != nil:
		return pin.Pending.SHA256, pin.Pending.seen(), true
	case len(pin.Flags) > 0 && !pin.Reviewed:
		return pin.SHA256, 1, true
	}
	return "", 0, false
}

// approve makes what waits the pin. The caller holds p.mu and checked that something waits.
func (p *Pins) approve(name string) {
	p.touch(name)
	pin := p.file.Tools[name]
	if pin.Pending != nil {
		*pin = pin.Pending.pinOf()
		return
	}
	pin.Reviewed = true
}

// Approve makes each named tool's pending definition its pin (and marks a
// flagged pin as reviewed), whatever is pending now. It returns the names
// it did not find with anything to approve. A person approving what they
// reviewed uses ApproveDefinition, which approves that definition only.
func (p *Pins) Approve(names ...string) (missing []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range names {
		if _, _, ok := p.file.Tools[n].waiting(); !ok {
			missing = append(missing, n)
			continue
		}
		p.approve(n)
	}
	return missing
}

// ApproveDefinition approves the definition of tool name whose hash is
// sha256 ([PinCheck.SHA256], shown by "pins list"), and only it: when another
// one waits, it is ErrStaleApproval naming the hash that waits. With sha256
// "", it approves what waits only when exactly one definition waited since
// the pin (a second one may have arrived after the person looked). It
// returns the hash it approved.
func (p *Pins) ApproveDefinition(name, sha256 string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sha, seen, ok := p.file.Tools[name].waiting()
	switch {
	case !ok:
		return "", fmt.Errorf("%w: %s", ErrNothingToApprove, name)
	case sha256 != "" && !strings.EqualFold(sha256, sha):
		return "", fmt.Errorf("%w: %s@%s; what waits now is %s@%s", ErrStaleApproval, name, sha256, name, sha)
	case sha256 == "" && seen > 1:
		return "", fmt.Errorf("%w: %d definitions of %s waited since it was pinned, so its name alone does not say which was reviewed; approve the one you reviewed: %s@%s is the one waiting now", ErrStaleApproval, seen, name, name, sha)
	}
	p.approve(name)
	return sha, nil
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

// ApproveNamed approves what arg names, as "toolselect mcp pins approve"
// takes it ([PinCheck.ApproveArg]): NAME@SHA256 approves that definition only
// (ApproveDefinition), NAME alone only the one definition that waited since
// the pin; a prompt or resource is KIND:NAME (prompt:..., resource:...,
// resourceTemplate:...). A name that is both a tool's and, read as
// KIND:NAME, a prompt's or resource's is refused as ambiguous. It returns
// what it approved.
func (p *Pins) ApproveNamed(arg string) (PinCheck, error) {
	key, sha, err := p.resolve(arg)
	if err != nil {
		return PinCheck{}, err
	}
	c := newPinCheck(key)
	p.mu.Lock()
	if d := p.file.Tools[key]; d != nil && d.Pending != nil {
		c.Status, c.Changed, c.Flags = PinChanged, d.Pending.Changed, d.Pending.Flags
		if d.SHA256 == "" {
			c.Status = PinUnreviewed
		}
	} else if d != nil {
		c.Status, c.Flags = PinOK, d.Flags
	}
	p.mu.Unlock()
	c.SHA256, err = p.ApproveDefinition(key, sha)
	return c, err
}

// resolve reads arg into an entry's key and the hash named ("" for none).
func (p *Pins) resolve(arg string) (key, sha string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := func(name string) []string {
		var out []string
		if _, ok := p.file.Tools[name]; ok {
			out = append(out, name)
		}
		if kind, n, ok := strings.Cut(name, ":"); ok {
			if _, known := pinKindMaps[kind]; known {
				if _, ok := p.file.Tools[pinKey(kind, n)]; ok {
					out = append(out, pinKey(kind, n))
				}
			}
		}
		return out
	}
	name := arg
	found := keys(name)
	if i := strings.LastIndexByte(arg, '@'); len(found) == 0 && i >= 0 {
		name, sha = arg[:i], arg[i+1:]
		found = keys(name)
	}
	if len(found) > 1 && sha != "" { // the hash tells them apart
		found = slices.DeleteFunc(found, func(k string) bool {
			w, _, _ := p.file.Tools[k].waiting()
			return !strings.EqualFold(w, sha)
		})
	}
	switch len(found) {
	case 0:
		return "", "", fmt.Errorf("%w: %s", ErrNothingToApprove, arg)
	case 1:
		return found[0], sha, nil
	}
	return "", "", fmt.Errorf("%q names both a tool and a %s; approve the one you reviewed by its hash (NAME@SHA256, from the list)", name, newPinCheck(found[1]).what())
}

// Waiting lists, by name, the tools an approval would change, with the
// definitions to review (Pinned, Pending, Seen): each with a pending
// changed definition (Status PinChanged, Held, the parts Changed and the
// new definition's Flags), each held for review on first sight (Status
// PinUnreviewed), and each pinned with flags not yet reviewed (Status
// PinOK, its Flags, Held false: a check holds it only when strict).
// Approve accepts exactly these; SHA256 is the hash ApproveDefinition takes.
func (p *Pins) Waiting() []PinCheck {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []PinCheck
	for n, pin := range p.file.Tools {
		sha, seen, ok := pin.waiting()
		if !ok {
			continue
		}
		c := newPinCheck(n)
		c.SHA256, c.Pinned, c.Seen = sha, pin.Definition, seen
		switch d := pin.Pending; {
		case d != nil:
			c.Status, c.Changed, c.Flags, c.Held, c.Pending = PinChanged, d.Changed, d.Flags, true, d.Definition
			if pin.SHA256 == "" {
				c.Status = PinUnreviewed
			}
		default:
			c.Status, c.Flags = PinOK, pin.Flags
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out
}

// Empty reports whether no tool is pinned (nor held for review) yet: the
// first pinning is still to come.
func (p *Pins) Empty() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.file.Tools) == 0
}
