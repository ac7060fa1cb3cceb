package registry

// ReadCatalogLimited exposes the size-limited reader behind ReadCatalog so
// tests need not feed it MaxCatalogBytes.
var ReadCatalogLimited = readCatalog
