package registry

// ReadCatalogLimited exposes the size-limited reader behind ReadCatalog so
// tests need not feed it MaxCatalogBytes.
var ReadCatalogLimited = readCatalog

// PrecheckThenCompile reports whether precheck decided a schema valid without
// the compiler, and what the compiler itself says of it.
func PrecheckThenCompile(raw []byte) (decided bool, compileErr error) {
	decided, _ = decidedValid(raw, DefaultLimits)
	doc, err := decodeSchema(raw, DefaultLimits)
	if err != nil {
		return decided, err
	}
	_, err = compileDoc(doc, DefaultLimits)
	return decided, err
}
