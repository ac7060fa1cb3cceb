package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolselect/toolselect/internal/par"
)

// Size bounds that no Limits setting raises.
const (
	// MaxNameBytes is the longest tool name the registry accepts.
	MaxNameBytes = 256
	// MaxCatalogBytes caps what LoadCatalogFile reads (256 MiB: a 100,000-tool
	// catalog of real MCP schemas is about 80 MB).
	MaxCatalogBytes = 256 << 20
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrUnknownTool: a lookup, a validation or a view named a tool that is
	// not registered.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrDuplicateName: a *RegistrationError for a name already registered.
	ErrDuplicateName = errors.New("duplicate tool name")
	// ErrNoSchema: a *RegistrationError for a tool without a parameters
	// schema where the registry requires one.
	ErrNoSchema = errors.New("tool has no parameters schema")
	// ErrExternalRef: a schema refused because a reference points outside it.
	ErrExternalRef = errors.New("reference outside the schema document")
	// ErrInvalidArgs is matched by every *ValidationError.
	ErrInvalidArgs = errors.New("invalid arguments")
	// ErrPinFileGone: [Pins.Reload] and [Pins.Save] found the pin file gone
	// since it was read; the pins read before stay in force and nothing is
	// written until it is back, so a file renamed away for a moment never
	// reads as "no pins".
	ErrPinFileGone = errors.New("the pin file is gone since it was read")
	// ErrPinStoreUnavailable is matched by an error of a [PinStore] that
	// could not be reached (a server away, a time-out): what it holds is
	// not known, and the pins read before stay in force.
	ErrPinStoreUnavailable = errors.New("the pin store cannot be reached")
	// ErrPinStoreReset is matched by an error of a [PinStore] that answers
	// but lost what it held since it was read (a server restarted without
	// its data): the pins read before stay in force and are written again
	// on the next [Pins.Save].
	ErrPinStoreReset = errors.New("the pin store lost its entries")
	// ErrNothingToApprove: [Pins.ApproveDefinition] found no definition of
	// the tool waiting for approval.
	ErrNothingToApprove = errors.New("nothing waits for approval")
	// ErrStaleApproval: [Pins.ApproveDefinition] was given a hash that is not
	// the definition waiting (it changed since it was reviewed), or a name
	// alone when more than one definition waited since the pin.
	ErrStaleApproval = errors.New("not the definition waiting for approval")
)

// Entry is a registered tool: its canonical definition and compiled validator.
// An Entry is immutable once registered and safe to share between goroutines.
type Entry struct {
	tool   Tool
	params json.RawMessage // the schema compacted once for views; nil for a schema-less tool
	limits Limits
	seq    uint64 // registration sequence number, increasing

	// compiled is the validator; nil for a schema-less tool, and until the
	// first validation for a schema precheck decided valid at registration
	// (deferred, with its top-level "required" kept in required).
	compiled   *jsonschema.Schema
	deferred   bool
	required   []string
	compile    sync.Once
	compileErr error
}

// schema returns the compiled validator (nil for a schema-less tool),
// compiling a deferred schema once. A deferred schema was decided valid at
// registration; should compiling it fail all the same, every validation
// fails with the reason (fail-closed), never passes unchecked.
func (e *Entry) schema() (*jsonschema.Schema, error) {
	if !e.deferred {
		return e.compiled, nil
	}
	e.compile.Do(func() {
		e.compiled, e.compileErr = compileSchema(e.params, e.limits)
	})
	return e.compiled, e.compileErr
}

// Name returns the tool's canonical name.
func (e *Entry) Name() string { return e.tool.Name }

// Tool returns a copy of the canonical definition.
func (e *Entry) Tool() Tool { return e.tool.clone() }

// Def gives read-only access to the definition without copying. Callers must
// not modify anything reachable from it.
func (e *Entry) Def() *Tool { return &e.tool }

// Validated reports whether arguments to this tool are checked against a schema.
func (e *Entry) Validated() bool { return e.params != nil }

// Required returns the names the schema's top-level "required" keyword
// lists (through a top-level $ref when the schema has none of its own), read
// from the compiled schema; nil for a schema-less tool. Callers must not
// modify the slice.
func (e *Entry) Required() []string {
	if e.deferred {
		return e.required
	}
	s := e.compiled
	for depth := 0; s != nil && depth < 8; depth++ {
		if len(s.Required) > 0 || s.Ref == nil {
			return s.Required
		}
		s = s.Ref
	}
	return nil
}

// Seq is the entry's registration sequence number; a re-registered tool gets a new one.
func (e *Entry) Seq() uint64 { return e.seq }

// ValidateArgs checks a raw JSON argument document: it must be a JSON object
// within the size and depth limits, with no name twice in one object, and
// satisfy the tool's schema. The error, if any, is a *ValidationError
// listing every violation.
func (e *Entry) ValidateArgs(raw []byte) error {
	_, err := e.ParseArgs(raw)
	return err
}

// ParseArgs checks raw as [Entry.ValidateArgs] does and returns the value it
// checked, encoded again as compact JSON (members in the order given, numbers
// as written, strings as decoded). Pass on this document, never raw: what runs is then what was
// validated, whichever JSON parser reads it next.
func (e *Entry) ParseArgs(raw []byte) (json.RawMessage, error) {
	sch, err := e.schema()
	if err != nil {
		return nil, schemaFailed(e.tool.Name, err)
	}
	return validateArgs(e.tool.Name, sch, raw, e.limits)
}

// DecodeArgs checks raw as [Entry.ParseArgs] does and decodes the document
// ParseArgs returns, the value that was validated, into the value into
// points to (as json.Unmarshal would), so that a handler receives what was
// checked. A value the schema accepts but into cannot hold (a fraction for
// an int field, say) is a *ValidationError with rule "decode" at the field's
// pointer.
func (e *Entry) DecodeArgs(raw []byte, into any) error {
	checked, err := e.ParseArgs(raw)
	if err != nil {
		return err
	}
	return decodeInto(e.tool.Name, checked, into)
}

// ValidateValue checks an already decoded JSON value against the schema alone
// (no object or size rule). It is the path the JSON-Schema-Test-Suite runs through.
// Numbers decoded as json.Number are checked as [Entry.ValidateArgs] checks
// them in a document: as the 64-bit float a receiver reads, and one beyond
// that float's range, or whose text is not a JSON number, is refused (rule
// "number").
func (e *Entry) ValidateValue(v any) error {
	sch, err := e.schema()
	if err != nil {
		return schemaFailed(e.tool.Name, err)
	}
	v, _, pointer, problem := receivedValue(v, nil)
	if problem != "" {
		return &ValidationError{Tool: e.tool.Name, Violations: []Violation{{Pointer: pointer, Rule: "number", Message: problem}}}
	}
	return validateValue(e.tool.Name, sch, v)
}

// Options configures a Registry. A nil *Options means defaults.
type Options struct {
	// Limits bounds schemas and argument documents.
	Limits Limits
	// Logger, if not nil, is told at Warn, once per tool name, of each tool
	// registered with Safe false: the zero value of a Go Tool literal, so a
	// tool whose Safe was never set is hidden from every caller that does
	// not allow unsafe tools, and this is the one word said about it. nil
	// logs nothing (the library is quiet unless asked).
	Logger *slog.Logger
}

// Registry holds tools by name, in registration order. It is safe for
// concurrent use; registering while others read is supported, and readers see
// either the catalog before or after a registration, never half of it.
type Registry struct {
	mu      sync.RWMutex
	entries []*Entry          // registration order
	byName  map[string]*Entry // canonical name -> entry
	gen     uint64            // bumped on every change
	seq     uint64
	limits  Limits
	names   *nameMaps // provider name mappings, rebuilt lazily

	attached sync.Map // key -> value: per-registry state of the layers above (Attached)

	log    *slog.Logger    // [Options.Logger]; nil: silent
	warned map[string]bool // names already warned of as unsafe (noteUnsafe)
}

// Attached returns the value kept on r under key, made with newValue the first
// time it is asked for and kept as long as r is: how a layer above keeps
// per-registry state without a global table (rank keeps each registry's
// shared index here, so it lives and dies with the registry). If two
// goroutines ask at once, both may call newValue; one value is kept and returned
// to both. key must be comparable; use an unexported type of your own.
func (r *Registry) Attached(key any, newValue func() any) any {
	if v, ok := r.attached.Load(key); ok {
		return v
	}
	v, _ := r.attached.LoadOrStore(key, newValue())
	return v
}

// New returns an empty registry.
func New(opts *Options) *Registry {
	var o Options
	if opts != nil {
		o = *opts
	}
	return &Registry{byName: map[string]*Entry{}, limits: o.Limits.WithDefaults(), log: o.Logger}
}

// Register adds one tool. It fails, naming the tool and the problem, when the
// definition is invalid or the name is taken; nothing is changed then.
func (r *Registry) Register(t Tool) error {
	e, err := r.prepare(t, -1)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if errs := r.dropRegistered([]*Entry{e}, -1); len(errs) > 0 {
		return errs[0]
	}
	r.add(e)
	return nil
}

// dropRegistered refuses, and sets to nil, each prepared entry whose name is
// already registered; index is the catalog index the first entry stands at
// (-1: not from a batch). r.mu is held.
func (r *Registry) dropRegistered(prepared []*Entry, index int) []error {
	var errs []error
	for i, e := range prepared {
		if e == nil {
			continue
		}
		if _, dup := r.byName[e.tool.Name]; dup {
			at := -1
			if index >= 0 {
				at = index + i
			}
			errs = append(errs, &RegistrationError{Tool: e.tool.Name, Index: at, Reason: "the name is already registered", Err: ErrDuplicateName})
			prepared[i] = nil
		}
	}
	return errs
}

// RegisterAll adds a batch of tools atomically: either every tool is added,
// or none is and the error lists every refused tool (an errors.Join of
// *RegistrationError values). The tools are checked in parallel.
func (r *Registry) RegisterAll(tools []Tool) error {
	prepared, errs := r.prepareAll(tools)
	r.mu.Lock()
	defer r.mu.Unlock()
	errs = append(errs, r.dropRegistered(prepared, 0)...)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	r.addAll(prepared)
	return nil
}

// RegisterValid registers every tool that passes and returns the refusals,
// one *RegistrationError each, with the tool's catalog index. It is the
// lenient counterpart of RegisterAll for ranking messy catalogs; execution
// paths should use RegisterAll. The tools are checked in parallel.
func (r *Registry) RegisterValid(tools []Tool) []error {
	prepared, refused := r.prepareAll(tools)
	r.mu.Lock()
	defer r.mu.Unlock()
	refused = append(refused, r.dropRegistered(prepared, 0)...)
	slices.SortFunc(refused, func(a, b error) int { return indexOf(a) - indexOf(b) })
	r.addAll(prepared) // refused entries are nil; addAll skips them
	return refused
}

func indexOf(err error) int {
	var re *RegistrationError
	if errors.As(err, &re) {
		return re.Index
	}
	return -1
}

// prepareAll checks and compiles a batch over the cores (outside any lock).
// A tool whose name is used again in the batch is refused after the first.
// prepared[i] is nil for a refused tool; the errors are in catalog order.
func (r *Registry) prepareAll(tools []Tool) (prepared []*Entry, errs []error) {
	prepared = make([]*Entry, len(tools))
	perTool := make([]error, len(tools))
	par.For(len(tools), 16, func(i int) {
		prepared[i], perTool[i] = r.prepare(tools[i], i)
	})
	seen := make(map[string]int, len(tools))
	for i, t := range tools {
		if perTool[i] != nil {
			errs = append(errs, perTool[i])
			continue
		}
		if j, dup := seen[t.Name]; dup {
			errs = append(errs, &RegistrationError{Tool: t.Name, Index: i, Reason: fmt.Sprintf("the name is used again (first at #%d)", j), Err: ErrDuplicateName})
			prepared[i] = nil
			continue
		}
		seen[t.Name] = i
	}
	return prepared, errs
}

// Replace registers t, replacing any tool of the same name in place (keeping
// its position in the catalog order). It is how a changed upstream catalog is
// refreshed.
func (r *Registry) Replace(t Tool) error {
	e, err := r.prepare(t, -1)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.byName[t.Name]; ok {
		r.seq++
		e.seq = r.seq
		for i, have := range r.entries {
			if have == old {
				next := append([]*Entry(nil), r.entries...)
				next[i] = e
				r.entries = next
				break
			}
		}
		r.byName[t.Name] = e
		r.changed()
		r.noteUnsafe([]*Entry{e})
		return nil
	}
	r.add(e)
	return nil
}

// noteUnsafe warns, through [Options.Logger], of the entries of one
// registration whose Safe is false, each name once in the registry's life:
// one record per registration naming them all. Go cannot tell a Safe
// never set from one set to false, so the record says both readings and
// what to write for each; it is logged once so that a tool meant unsafe
// costs one line. r.mu is held.
func (r *Registry) noteUnsafe(batch []*Entry) {
	if r.log == nil {
		return
	}
	var names []string
	for _, e := range batch {
		if e == nil || e.tool.Safe || r.warned[e.tool.Name] {
			continue
		}
		if r.warned == nil {
			r.warned = map[string]bool{}
		}
		r.warned[e.tool.Name] = true
		names = append(names, e.tool.Name)
	}
	if len(names) == 0 {
		return
	}
	r.log.LogAttrs(context.Background(), slog.LevelWarn,
		"registry: tools registered unsafe (Safe is false, also the zero value of a Go Tool literal): they are offered and run only where unsafe tools are allowed; set Safe: true, or build the tool with registry.NewTool, for a safe one",
		slog.Any("tools", names))
}

// Unregister removes a tool. It reports whether the tool was present.
func (r *Registry) Unregister(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	old, ok := r.byName[name]
	if !ok {
		return false
	}
	delete(r.byName, name)
	next := make([]*Entry, 0, len(r.entries)-1)
	for _, e := range r.entries {
		if e != old {
			next = append(next, e)
		}
	}
	r.entries = next
	r.changed()
	return true
}

// add appends under the write lock. The entries slice is copied on write so
// that snapshots handed out earlier stay valid.
func (r *Registry) add(e *Entry) { r.addAll([]*Entry{e}) }

// addAll appends a batch under the write lock, copying the entries slice
// once for the whole batch; nil entries are skipped.
func (r *Registry) addAll(batch []*Entry) {
	next := make([]*Entry, len(r.entries), len(r.entries)+len(batch))
	copy(next, r.entries)
	for _, e := range batch {
		if e == nil {
			continue
		}
		r.seq++
		e.seq = r.seq
		next = append(next, e)
		r.byName[e.tool.Name] = e
	}
	r.entries = next
	r.changed()
	r.noteUnsafe(batch)
}

func (r *Registry) changed() {
	r.gen++
	r.names = nil
}

// prepare checks and compiles a definition outside any lock.
func (r *Registry) prepare(t Tool, index int) (*Entry, error) {
	refuse := func(reason string, err error) error {
		return &RegistrationError{Tool: t.Name, Index: index, Reason: reason, Err: err}
	}
	if err := checkName(t.Name); err != nil {
		return nil, refuse("invalid name", err)
	}
	if t.Type == "" {
		t.Type = "function"
	}
	if t.Type != "function" {
		return nil, refuse(fmt.Sprintf("type must be \"function\", got %q", t.Type), nil)
	}
	if !utf8.ValidString(t.Description) {
		return nil, refuse("the description is not valid UTF-8", nil)
	}
	if len(t.Description) > r.limits.MaxDescriptionBytes {
		return nil, refuse(fmt.Sprintf("the description is %d bytes, over the limit of %d", len(t.Description), r.limits.MaxDescriptionBytes), nil)
	}
	// The no-schema refusals carry their rule: they name the definition's
	// fields, which a front door with names of its own words itself.
	ruled := func(rule Rule, reason string, err error) error {
		return &RegistrationError{Tool: t.Name, Index: index, Reason: reason, Err: err, Rule: rule}
	}
	if t.NoSchemaMode != "" && !t.NoSchemaMode.Valid() {
		return nil, ruled(RuleNoSchemaMode, fmt.Sprintf("noSchemaMode %q is not one of read-only, human-approval, full", t.NoSchemaMode), nil)
	}
	if t.AllowNoSchema && t.NoSchemaMode == "" {
		return nil, ruled(RuleNoSchemaMode, "allowNoSchema is set without a noSchemaMode (read-only, human-approval or full)", nil)
	}
	e := &Entry{limits: r.limits}
	if !t.HasSchema() {
		if !t.AllowNoSchema {
			return nil, ruled(RuleNoSchema, "parameters schema is missing (set allowNoSchema with a noSchemaMode to register a tool without one)", ErrNoSchema)
		}
		t.Parameters = nil
	} else {
		sch, deferred, required, err := checkSchema(t.Parameters, r.limits)
		if err != nil {
			return nil, refuse("invalid parameters schema", err)
		}
		e.compiled, e.deferred, e.required = sch, deferred, required
	}
	e.tool = t.clone()
	if e.tool.HasSchema() {
		// Views embed the schema compacted (it goes on the wire and into
		// prompts); compact it once here rather than in every view, sharing
		// the verbatim bytes when they are compact already.
		e.params = e.tool.Parameters
		if c := compactValid(e.tool.Parameters); c != nil {
			e.params = c
		}
	}
	return e, nil
}

// schemaFailed is the validation error of a tool whose deferred schema did
// not compile after all.
func schemaFailed(tool string, err error) error {
	return &ValidationError{Tool: tool, Violations: []Violation{{Pointer: "", Rule: "schema", Message: "the tool's schema does not compile: " + err.Error()}}}
}

// checkName reports why a tool name is unacceptable, or nil. Names may hold
// dots, spaces, '&' and any printable Unicode; provider views map them.
func checkName(name string) error {
	if name == "" {
		return errors.New("the name is empty")
	}
	if len(name) > MaxNameBytes {
		return fmt.Errorf("the name is %d bytes, over the limit of %d", len(name), MaxNameBytes)
	}
	if !utf8.ValidString(name) {
		return errors.New("the name is not valid UTF-8")
	}
	for _, c := range name {
		if unicode.IsControl(c) || c == '\u2028' || c == '\u2029' {
			return fmt.Errorf("the name holds the control character %U", c)
		}
	}
	if strings.TrimSpace(name) != name {
		return errors.New("the name starts or ends with white space")
	}
	return nil
}

// Get returns the entry for a canonical name.
func (r *Registry) Get(name string) (*Entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.byName[name]
	return e, ok
}

// Lookup resolves a name as the registry knows it or as any provider view
// mapped it (e.g. a call coming back from OpenAI under a sanitised name).
func (r *Registry) Lookup(name string) (*Entry, bool) {
	if e, ok := r.Get(name); ok {
		return e, true
	}
	maps := r.nameMaps()
	r.mu.RLock()
	defer r.mu.RUnlock()
	if canon, ok := maps.reverse[name]; ok {
		e, ok := r.byName[canon]
		return e, ok
	}
	return nil, false
}

// Snapshot returns the entries in registration order and the generation they
// belong to. The slice must not be modified; it stays valid after later changes.
func (r *Registry) Snapshot() ([]*Entry, uint64) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.entries, r.gen
}

// Entries returns the entries in registration order (see Snapshot).
func (r *Registry) Entries() []*Entry {
	s, _ := r.Snapshot()
	return s
}

// Generation is a counter bumped on every change; indexes use it to notice updates.
func (r *Registry) Generation() uint64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.gen
}

// Len returns the number of registered tools.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.entries)
}

// Tools returns copies of every definition in registration order.
func (r *Registry) Tools() []Tool {
	entries := r.Entries()
	out := make([]Tool, len(entries))
	for i, e := range entries {
		out[i] = e.Tool()
	}
	return out
}

// Names returns the canonical names in registration order.
func (r *Registry) Names() []string {
	entries := r.Entries()
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.tool.Name
	}
	return out
}

// Validate checks raw JSON arguments for the named tool (canonical or mapped name).
func (r *Registry) Validate(name string, args []byte) error {
	e, ok := r.Lookup(name)
	if !ok {
		return r.UnknownTool(name, nil)
	}
	return e.ValidateArgs(args)
}

// MarshalJSON writes the registry as a canonical catalog (a JSON array of tools).
func (r *Registry) MarshalJSON() ([]byte, error) {
	return json.Marshal(r.Tools())
}
