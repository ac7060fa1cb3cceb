package mcpproxy

import (
	"encoding/json"
	"github.com/toolselect/toolselect/executor/metatool"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect/rank"
)

// With the real server-filesystem as "fs": call_tool of a name without its
// upstream prefix, or shortened, suggests the tool meant first; find_tool
// marks list_allowed_directories as the prerequisite it is, below the tool
// that needs it, on top of the limit.
func TestRealPeersSuggestionsAndPrerequisites(t *testing.T) {
	ups, _ := realPeers(t)
	ups[1].Name = "fs"
	p := startProxy(t, &Config{Upstreams: ups})
	cs := connectMemory(t, p, "")
	for _, name := range []string{"read_text_file", "fs__read_txt", "filesystem__read_text_file"} {
		res := call(t, cs, rank.CallToolName, map[string]any{"name": name, "arguments": map[string]any{"path": "x"}})
		var me metatool.MetaError
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &me); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(me.DidYouMean) == 0 || me.DidYouMean[0] != "fs__read_text_file" {
			t.Errorf("call_tool %s: didYouMean %v, want fs__read_text_file first", name, me.DidYouMean)
		}
	}
	res := call(t, cs, rank.FindToolName, map[string]any{"query": "read the text file notes.txt", "limit": 3})
	var out struct{ Tools []metatool.FoundTool }
	if err := json.Unmarshal([]byte(text(res)), &out); err != nil {
		t.Fatal(err)
	}
	found := 0
	for i, f := range out.Tools {
		if f.PrerequisiteOf == "" {
			found++
			continue
		}
		if i == 0 || f.Reason == "" || f.Score >= out.Tools[i-1].Score && out.Tools[i-1].PrerequisiteOf == "" {
			t.Errorf("prerequisite %+v after %+v", f, out.Tools[i-1])
		}
	}
	if found != 3 || len(out.Tools) == found || out.Tools[1].Name != "fs__list_allowed_directories" || out.Tools[1].PrerequisiteOf != out.Tools[0].Name {
		t.Errorf("find_tool: %+v, want 3 tools found for the query and fs__list_allowed_directories marked after the first", out.Tools)
	}
}
