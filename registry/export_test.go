package registry

import "encoding/json"

// ReadCatalogLimited exposes the size-limited reader behind ReadCatalog so
// tests need not feed it MaxCatalogBytes.
var ReadCatalogLimited = readCatalog

// PrecheckThenCompile reports whether precheck decided a schema valid without
// the compiler, and what the compiler itself says of it.
func PrecheckThenCompile(raw []byte) (decided bool, compileErr error) {
	decided, _ = decidedValid(raw, defaultLimits)
	doc, err := decodeSchema(raw, defaultLimits)
	if err != nil {
		return decided, err
	}
	_, err = compileDoc(doc, defaultLimits)
	return decided, err
}

// DecodeCanonicalBoth decodes one canonical catalog item with the fast path
// (ok false when it declines) and with encoding/json.
func DecodeCanonicalBoth(raw []byte) (fast Tool, ok bool, slow Tool, err error) {
	members, merr := objectMembers(raw, span{0, len(raw)})
	if merr == nil {
		fast, ok = fastCanonical(raw, members)
	}
	type plain Tool
	p := plain{Safe: true}
	err = json.Unmarshal(raw, &p)
	return fast, ok, Tool(p), err
}

// CheckName and DecodeValue expose the name check and the decoder
// ValidateArgs uses (json.Number, no trailing data) to
// the external tests and benchmarks.
var (
	CheckName   = checkName
	DecodeValue = decodeJSON
)
