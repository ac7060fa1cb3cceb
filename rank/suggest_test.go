package rank

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// suggestRegistry is the LiveMCPBench catalog (527 tools of 70 MCP
// servers) plus server-filesystem's tools of today under the upstream
// name "fs".
func suggestRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	tools, _, err := registry.LoadCatalogFile(filepath.Join("..", "testdata", "sets", "livemcpbench", "tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`
	for name, desc := range map[string]string{
		"read_text_file":            "Read the complete contents of a file from the file system as text.",
		"read_media_file":           "Read an image or audio file. Returns the base64 encoded data and MIME type.",
		"read_file":                 "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.",
		"read_multiple_files":       "Read the contents of multiple files simultaneously.",
		"write_file":                "Create a new file or completely overwrite an existing file with new content.",
		"edit_file":                 "Make line-based edits to a text file.",
		"create_directory":          "Create a new directory or ensure a directory exists.",
		"list_directory":            "Get a detailed listing of all files and directories in a specified path.",
		"list_directory_with_sizes": "Get a detailed listing of all files and directories in a specified path, including sizes.",
		"directory_tree":            "Get a recursive tree view of files and directories as a JSON structure.",
		"move_file":                 "Move or rename files and directories.",
		"search_files":              "Recursively search for files and directories matching a pattern.",
		"get_file_info":             "Retrieve detailed metadata about a file or directory.",
	} {
		tools = append(tools, registry.NewTool("fs__"+name, desc, json.RawMessage(path)))
	}
	tools = append(tools, registry.NewTool("fs__list_allowed_directories",
		"Returns the list of directories that this server is allowed to access. Use this to understand which directories and their nested paths are available before trying to access files.",
		json.RawMessage(`{"type":"object"}`)))
	reg := registry.New(nil)
	reg.RegisterValid(tools) // the set's few invalid schemas are left out, as everywhere
	return reg
}

// misspellings are names a model calls that name no tool, each with the
// tool it meant: the upstream prefix dropped or wrong, a word shortened,
// dropped or inflected, other separators or case, and a few that only the
// words can find.
var misspellings = []struct{ name, meant string }{
	{"read_text_file", "fs__read_text_file"},
	{"fs__read_txt", "fs__read_text_file"},
	{"fs_read_text_file", "fs__read_text_file"},
	{"filesystem__read_text_file", "fs__read_text_file"},
	{"fs__readTextFile", "fs__read_text_file"},
	{"fs__read-text-file", "fs__read_text_file"},
	{"fs__list_dir", "fs__list_directory"},
	{"fs__list_directories", "fs__list_directory"},
	{"fs__write", "fs__write_file"},
	{"fs__search_file", "fs__search_files"},
	{"fs__get_file_infos", "fs__get_file_info"},
	{"fs__dir_tree", "fs__directory_tree"},
	{"fs__move", "fs__move_file"},
	{"fs__edit", "fs__edit_file"},
	{"fs__mkdir", "fs__create_directory"},
	{"fs__read_image", "fs__read_media_file"},
	{"memory__read_graf", "memory__read_graph"},
	{"create_relations", "memory__create_relations"},
	{"yahoo-finance__get_stock_price", "yahoo-finance__get_current_stock_price"},
	{"yahoo_finance__get_dividends", "yahoo-finance__get_dividends"},
	{"bing_search", "bing-cn-mcp__bing_search"},
	{"searxng__excel_reader", "searxng__excel_read"},
	{"playwright__upload_file", "playwright__playwright_upload_file"},
	{"text-editor__get_text_file_content", "text-editor__get_text_file_contents"},
	{"git_checkout", "git__git_checkout"},
	{"git__checkout", "git__git_checkout"},
	{"osm__geocode_address", "osm-mcp-server__geocode_address"},
	{"osm-mcp-server__geocode", "osm-mcp-server__geocode_address"},
	{"ygocdb__search_card", "ygocdb__search_cards"},
	{"chess__get_board", "chess__get_board_visualization"},
	{"npm-sentinel-mcp__npm_versions", "npm-sentinel-mcp__npmVersions"},
	{"sitemap__parse_sitemap", "sitemap__parse_sitemap_content"},
	{"12306-mcp__get_current_date", "12306-mcp__get-current-date"},
	{"basic-memory__list_projects", "basic-memory__list_memory_projects"},
	{"music-analysis__beat_tracking", "music-analysis__beat_track"},
	{"arxiv__get_paper_data", "mcp-simple-arxiv__get_paper_data"},
}

// hitRates is hit@1 and hit@3 of suggest over the misspellings.
func hitRates(t *testing.T, suggest func(name string) []string) (at1, at3 float64, missed []string) {
	t.Helper()
	for _, m := range misspellings {
		got := suggest(m.name)
		i := slices.Index(got, m.meant)
		if i == 0 {
			at1++
		}
		if i >= 0 && i < 3 {
			at3++
		} else {
			missed = append(missed, m.name)
		}
	}
	n := float64(len(misspellings))
	return at1 / n, at3 / n, missed
}

// Suggest finds what a misspelt name meant: measured on the table against
// the ranking of the name as a query, which suggestions were before.
func TestSuggestMisspellings(t *testing.T) {
	ctx := context.Background()
	r := For(suggestRegistry(t))
	before1, before3, _ := hitRates(t, func(name string) []string {
		picks, err := r.Rank(ctx, name, &Options{MaxCandidates: 3})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range picks {
			out = append(out, p.Tool)
		}
		return out
	})
	after1, after3, missed := hitRates(t, func(name string) []string {
		got, err := r.Suggest(ctx, name, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		return got
	})
	t.Logf("%d misspellings: ranking the name hit@1 %.2f hit@3 %.2f; Suggest hit@1 %.2f hit@3 %.2f; missed %v",
		len(misspellings), before1, before3, after1, after3, missed)
	if after1 < 0.9 || after3 < 0.9 || after1 <= before1 || after3 < before3 {
		t.Errorf("Suggest hit@1 %.2f hit@3 %.2f, want at least 0.9 each and above ranking the name (%.2f, %.2f; missed %v)", after1, after3, before1, before3, missed)
	}
	for name, want := range map[string]string{"read_text_file": "fs__read_text_file", "fs__read_txt": "fs__read_text_file"} {
		if got, _ := r.Suggest(ctx, name, 3, nil); len(got) == 0 || got[0] != want {
			t.Errorf("Suggest(%q) = %v, want %s first", name, got, want)
		}
	}
}

// Suggest obeys the filters: an unsafe tool is not suggested unless
// allowed, and k bounds the list.
func TestSuggestFilters(t *testing.T) {
	tools := []registry.Tool{
		registry.NewTool("fs__read_text_file", "Read a file.", json.RawMessage(`{"type":"object"}`)),
		registry.NewTool("fs__delete_file", "Delete a file.", json.RawMessage(`{"type":"object"}`)),
	}
	tools[1].Safe = false
	reg := registry.New(nil)
	if errs := reg.RegisterValid(tools); len(errs) > 0 {
		t.Fatal(errs[0])
	}
	r := For(reg)
	ctx := context.Background()
	if got, _ := r.Suggest(ctx, "delete_file", 3, nil); slices.Contains(got, "fs__delete_file") {
		t.Errorf("unsafe tool suggested: %v", got)
	}
	if got, _ := r.Suggest(ctx, "delete_file", 3, &Options{AllowUnsafe: true}); len(got) == 0 || got[0] != "fs__delete_file" {
		t.Errorf("AllowUnsafe: got %v, want fs__delete_file first", got)
	}
	if got, _ := r.Suggest(ctx, "file", 1, &Options{AllowUnsafe: true}); len(got) != 1 {
		t.Errorf("k=1: got %v", got)
	}
}
