package capi

import (
	"encoding/json"
	"testing"
)

const rankCatalog = `[
{"name":"list_events","description":"List the calendar events of a day at work","parameters":{"type":"object","properties":{"day":{"type":"string"}}}},
{"name":"send_email","description":"Send an email message","parameters":{"type":"object","properties":{"to":{"type":"string"}}}},
{"name":"delete_events","description":"Delete every calendar event of a day","safe":false,"parameters":{"type":"object","properties":{"day":{"type":"string"}}}},
{"name":"payroll_events","description":"Calendar events of the payroll team","roles":["hr"],"parameters":{"type":"object","properties":{}}}
]`

type rankBody struct {
	Picks []struct {
		Tool       string  `json:"tool"`
		Score      float64 `json:"score"`
		Reason     string  `json:"reason"`
		Provenance struct {
			Matched []string `json:"matched"`
		} `json:"provenance"`
	} `json:"picks"`
	Hidden []struct {
		Tool   string `json:"tool"`
		Hidden string `json:"hidden"`
	} `json:"hidden"`
}

func rankOf(t *testing.T, h uint64, req string) rankBody {
	t.Helper()
	r := RegistryRank(h, []byte(req), true, 0)
	if r.Code != OK {
		t.Fatalf("RegistryRank(%s): %s", req, r.Body)
	}
	var b rankBody
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRegistryRank(t *testing.T) {
	h := newRegistry(t)
	if r := RegistryRegister(h, []byte(rankCatalog), true); r.Code != OK {
		t.Fatalf("register: %s", r.Body)
	}
	b := rankOf(t, h, `{"task":"calendar events at work","k":1}`)
	if len(b.Picks) != 1 || b.Picks[0].Tool != "list_events" || b.Picks[0].Score <= 0 || b.Picks[0].Reason == "" {
		t.Fatalf("picks = %+v, want list_events alone with a score and a reason", b.Picks)
	}
	// The filters' casualties are named with the rule, as the CLI notes them.
	b = rankOf(t, h, `{"task":"calendar events at work"}`)
	hid := map[string]string{}
	for _, p := range b.Hidden {
		hid[p.Tool] = p.Hidden
	}
	if hid["delete_events"] != "unsafe" || hid["payroll_events"] != "role" {
		t.Errorf("hidden = %+v, want delete_events unsafe and payroll_events role", b.Hidden)
	}
	// The CLI's options, by their flag names.
	b = rankOf(t, h, `{"task":"calendar events","allow_unsafe":true,"roles":["hr"],"k":3,"min_score":-1,"debug":true,"scorer":"keyword","no_prerequisites":true}`)
	if len(b.Picks) != 3 || len(b.Hidden) != 0 {
		t.Errorf("with the filters lifted: picks %+v hidden %+v, want three picks and nothing hidden", b.Picks, b.Hidden)
	}
	if len(b.Picks) > 0 && len(b.Picks[0].Provenance.Matched) == 0 {
		t.Errorf("debug: the first pick names no matched terms: %+v", b.Picks[0])
	}
	if b := rankOf(t, h, `{"task":"zzz qqq"}`); b.Picks == nil || len(b.Picks) != 0 {
		t.Errorf("a task nothing matches: picks %+v, want [] (not null)", b.Picks)
	}
	// Per-tool rules, as every front door reads them: deny hides (with its
	// rule) even what allow_unsafe lets through; allow shows an unsafe tool.
	b = rankOf(t, h, `{"task":"calendar events at work","allow_unsafe":true,"rules":{"deny":["LIST_*"]}}`)
	hid = map[string]string{}
	for _, p := range b.Hidden {
		hid[p.Tool] = p.Hidden
	}
	if hid["list_events"] != "denied_by_rule" || hid["delete_events"] != "" {
		t.Errorf("deny rule: hidden = %+v, want list_events denied_by_rule and delete_events shown", b.Hidden)
	}
	b = rankOf(t, h, `{"task":"calendar events at work","rules":{"allow":["delete_events"]}}`)
	for _, p := range b.Hidden {
		if p.Tool == "delete_events" {
			t.Errorf("allow rule: delete_events still hidden (%s)", p.Hidden)
		}
	}
	wantErr(t, RegistryRank(h, []byte(`{"task":"x","rules":{"alow":["a"]}}`), true, 0), ErrArgument, `"rules.alow"`)
	wantErr(t, RegistryRank(h, []byte(`{"task":"x","rules":{"deny":["[x"]}}`), true, 0), ErrArgument, "rules.deny[0]")
	wantErr(t, RegistryRank(h, []byte(`{"task":"x","kk":2}`), true, 0), ErrArgument, `"kk"`)
	wantErr(t, RegistryRank(h, []byte(`{"task":""}`), true, 0), ErrArgument, "task is empty")
	wantErr(t, RegistryRank(h, []byte(`{"task":"x","k":0}`), true, 0), ErrArgument, "k must be from 1")
	wantErr(t, RegistryRank(h, []byte(`{"task":"x","scorer":"hybrid"}`), true, 0), ErrArgument, "embeddings endpoint")
	wantErr(t, RegistryRank(h, []byte(`{"task":"x","scorer":"bm52"}`), true, 0), ErrArgument, `unknown scorer "bm52"`)
	wantErr(t, RegistryRank(h, []byte(`{"task":"x","timeout_s":-1}`), true, 0), ErrArgument, "timeout_s")
	wantErr(t, RegistryRank(h, nil, false, 0), ErrArgument, "request_json is NULL")
	wantErr(t, RegistryRank(h, []byte(`{"task":"x"}`), true, 99999), ErrHandle, "")
	RegistryClose(h)
	wantErr(t, RegistryRank(h, []byte(`{"task":"x"}`), true, 0), ErrHandle, "closed")
}

func TestRegistryRankCancelled(t *testing.T) {
	h := newRegistry(t)
	if r := RegistryRegister(h, []byte(rankCatalog), true); r.Code != OK {
		t.Fatalf("register: %s", r.Body)
	}
	tok := uint64(decode(t, CancelNew())["handle"].(float64))
	defer CancelClose(tok)
	Cancel(tok)
	wantErr(t, RegistryRank(h, []byte(`{"task":"calendar events"}`), true, tok), ErrCanceled, "cancelled")
}
