package faultserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/toolselect/toolselect/internal/chatwire"
)

// Call is one call in a scripted answer: a tool's name and its arguments.
type Call = chatwire.Call

// Reply is one scripted answer of the "ok" model, for a stand-in that
// answers a few known tasks the way a model would (`make demo` without an
// endpoint). The first Reply whose When occurs in the request's user
// messages answers, unless Unoffered names a tool the request offers: such
// a Reply answers only while that tool is missing from the offer (a model
// that cannot find the tool it needs asks to search). It answers Search
// (a search round: {"calls":[],"search":...}, natively a search_tools call)
// when set, else Calls. A request no Reply matches gets no calls.
type Reply struct {
	When      string `json:"when"`
	Unoffered string `json:"unoffered,omitempty"`
	Search    string `json:"search,omitempty"`
	Calls     []Call `json:"calls,omitempty"`
}

// LoadScript reads a JSON array of [Reply] from a file.
func LoadScript(path string) ([]Reply, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var script []Reply
	if err := json.Unmarshal(b, &script); err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	for i, r := range script {
		if r.When == "" {
			return nil, fmt.Errorf("script %s: reply #%d has no \"when\"", path, i+1)
		}
	}
	return script, nil
}

// scripted answers a request from the script.
func (s *Server) scripted(w http.ResponseWriter, req *chatRequest, native bool) {
	user, system := messageTexts(req.Messages)
	for _, r := range s.opts.Script {
		if !strings.Contains(user, r.When) {
			continue
		}
		if r.Unoffered != "" && offers(req, system, r.Unoffered) {
			continue
		}
		if r.Search == "" {
			s.complete(w, req, native, r.Calls)
			return
		}
		if native {
			args, _ := json.Marshal(map[string]string{"query": r.Search})
			s.complete(w, req, true, []call{{Tool: "search_tools", Args: args}})
			return
		}
		b, _ := json.Marshal(map[string]any{"calls": []call{}, "search": r.Search})
		content := string(b)
		writeRaw(w, 200, "application/json", chatwire.Completion(req.Model, &content, nil))
		return
	}
	s.complete(w, req, native, []call{})
}

// messageTexts joins the text of the user messages and of the system messages.
func messageTexts(messages []json.RawMessage) (user, system string) {
	var u, sys strings.Builder
	for _, raw := range messages {
		var m struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var parts []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				text += p.Text
			}
		}
		switch m.Role {
		case "user":
			u.WriteString(text + "\n")
		case "system", "developer":
			sys.WriteString(text + "\n")
		}
	}
	return u.String(), sys.String()
}

// offers reports whether the request offers the named tool: among its
// native tools, or in the tool list of its system prompt.
func offers(req *chatRequest, system, name string) bool {
	quoted, _ := json.Marshal(name)
	for _, t := range req.Tools {
		if strings.Contains(string(t), `"name":`+string(quoted)) {
			return true
		}
	}
	return strings.Contains(system, string(quoted))
}
