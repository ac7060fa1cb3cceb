// Package registry holds toolselect's canonical tool definitions.
//
//	func main() {
//		reg := registry.New(nil)
//		err := reg.Register(registry.NewTool("get_weather", "Current weather for a city.",
//			json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)))
//		if err != nil {
//			log.Fatal(err) // not a self-contained JSON Schema object
//		}
//		fmt.Println(reg.Validate("get_weather", []byte(`{"town":"Paris"}`))) // missing property 'city'
//		view, _ := reg.View(registry.FormatOpenAI)
//		fmt.Println(string(view)) // the catalog as OpenAI's tools field
//	}
//
// A [Tool] is registered once: its JSON Schema is kept byte-for-byte as given,
// checked (a JSON object, no reference outside the document), and compiled into
// a validator that every later argument check reuses. Provider views (OpenAI,
// Anthropic, Ollama, MCP) are derived on demand and never touch the canonical
// schema. Registration is fail-closed: a tool without a schema is refused unless
// its author sets [Tool.AllowNoSchema] together with a [NoSchemaMode].
//
// # Start here
//
//   - [New] makes a [Registry]; [Registry.Register], [Registry.RegisterAll] and
//     [Registry.RegisterValid] add [Tool] definitions ([NewTool] builds one).
//   - [ParseCatalog] and [LoadCatalogFile] read canonical,
//     OpenAI, Anthropic and MCP catalogs.
//   - [Registry.Lookup] resolves a canonical or provider-mapped name to an
//     [Entry]; [Entry.ValidateArgs] checks arguments (a [ValidationError]
//     lists every [Violation]) and [Entry.ParseArgs] returns the checked
//     value written again, the document to pass on.
//   - [Eligibility] is the one safety, role and capability rule that ranking,
//     selection and the executor apply.
//   - [Pins] holds tool definitions pinned on first sight ([LoadPins],
//     [Pins.Check], [Pins.Approve]; [Pins.Reload] and [Pins.Save] merge
//     with edits made to the file elsewhere) and flags hidden text in
//     descriptions ([FlagInvisible], [FlagBidi], [FlagHTMLComment], [FlagHiddenMarkup]).
package registry
