package selector

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseReply(t *testing.T) {
	ok := []struct {
		name, reply string
		want        []rawCall
	}{
		{"plain", `{"calls":[{"tool":"a","args":{"x":1},"reasoning":"r"}]}`, []rawCall{{"a", []byte(`{"x":1}`), "r"}}},
		{"fenced json", "```json\n{\"calls\":[{\"tool\":\"a\",\"args\":{}}]}\n```", []rawCall{{"a", []byte(`{}`), ""}}},
		{"fenced bare", "  ```\n{\"calls\":[]}\n```  ", []rawCall{}},
		{"args as string", `{"calls":[{"tool":"a","args":"{\"x\": [1, 2]}"}]}`, []rawCall{{"a", []byte(`{"x":[1,2]}`), ""}}},
		{"args empty string", `{"calls":[{"tool":"a","args":""}]}`, []rawCall{{"a", []byte(`{}`), ""}}},
		{"args absent", `{"calls":[{"tool":"a"}]}`, []rawCall{{"a", []byte(`{}`), ""}}},
		{"args null, reasoning null", `{"calls":[{"tool":"a","args":null,"reasoning":null}]}`, []rawCall{{"a", []byte(`{}`), ""}}},
		{"extra keys ignored", `{"calls":[{"tool":"a","args":{},"id":7}],"note":"x"}`, []rawCall{{"a", []byte(`{}`), ""}}},
		{"numbers kept verbatim", `{"calls":[{"tool":"a","args":{"n":12345678901234567890}}]}`, []rawCall{{"a", []byte(`{"n":12345678901234567890}`), ""}}},
		{"empty calls", `{"calls":[]}`, []rawCall{}},
		// Exactly one calls object among prose is read: the
		// shapes models actually send.
		{"prose before json", `Here: {"calls":[]}`, []rawCall{}},
		{"trailing text", `{"calls":[{"tool":"a","args":{}}]} and more`, []rawCall{{"a", []byte(`{}`), ""}}},
		{"inside a sentence", `I will call {"calls":[{"tool":"a","args":{"q":"}{"}}]} now.`, []rawCall{{"a", []byte(`{"q":"}{"}`), ""}}},
		{"closed fence then prose", "```json\n{\"calls\":[{\"tool\":\"a\",\"args\":{}}]}\n```\nThis checks the weather.", []rawCall{{"a", []byte(`{}`), ""}}},
		{"unclosed fence", "```json\n{\"calls\":[]}", []rawCall{}},
		{"fence with other lang", "```python\n{\"calls\":[]}\n```", []rawCall{}},
		{"other objects beside it", `Note {"x":1} then {"calls":[{"tool":"a"}]}`, []rawCall{{"a", []byte(`{}`), ""}}},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := parseReply(tc.reply)
			require.NoError(t, err)
			require.Len(t, got, len(tc.want))
			for i := range got {
				assert.Equal(t, tc.want[i].Tool, got[i].Tool)
				assert.Equal(t, string(tc.want[i].Args), string(got[i].Args))
				assert.Equal(t, tc.want[i].Reasoning, got[i].Reasoning)
			}
		})
	}
	bad := map[string]string{
		"empty":                    "",
		"prose":                    "Sure! Here are the calls.",
		"array":                    `[{"tool":"a"}]`,
		"invalid json":             `{"calls":[`,
		"no calls key":             `{"tool":"a","args":{}}`,
		"calls null":               `{"calls":null}`,
		"calls object":             `{"calls":{"tool":"a"}}`,
		"two objects":              `{"calls":[]}{"calls":[]}`,
		"two candidates in prose":  `Either {"calls":[{"tool":"a"}]} or {"calls":[{"tool":"b"}]}.`,
		"one candidate, invalid":   `Here: {"calls":[{"args":{}}]} done`,
		"call not object":          `{"calls":["a"]}`,
		"tool missing":             `{"calls":[{"args":{}}]}`,
		"tool not string":          `{"calls":[{"tool":1,"args":{}}]}`,
		"tool empty":               `{"calls":[{"tool":" ","args":{}}]}`,
		"args array":               `{"calls":[{"tool":"a","args":[1]}]}`,
		"args number":              `{"calls":[{"tool":"a","args":3}]}`,
		"args string not object":   `{"calls":[{"tool":"a","args":"[1]"}]}`,
		"args string invalid json": `{"calls":[{"tool":"a","args":"{x"}]}`,
		"reasoning not string":     `{"calls":[{"tool":"a","args":{},"reasoning":{"a":1}}]}`,
	}
	for name, reply := range bad {
		t.Run("bad/"+name, func(t *testing.T) {
			_, _, err := parseReply(reply)
			var pe *parseError
			require.ErrorAs(t, err, &pe, "reply %q", reply)
		})
	}
}

func TestHydrateNative(t *testing.T) {
	got, err := hydrateNative([]NativeCall{{Name: "a", Arguments: `{"x": 1}`}, {Name: "b", Arguments: ""}, {Name: "c", Arguments: `"{\"y\":2}"`}})
	require.NoError(t, err)
	assert.Equal(t, `{"x":1}`, string(got[0].Args))
	assert.Equal(t, `{}`, string(got[1].Args))
	assert.Equal(t, `{"y":2}`, string(got[2].Args))
	for _, bad := range []NativeCall{{Name: "", Arguments: "{}"}, {Name: "a", Arguments: "{"}, {Name: "a", Arguments: "[]"}} {
		_, err := hydrateNative([]NativeCall{bad})
		assert.Error(t, err, "%+v", bad)
	}
}

func TestServerMessage(t *testing.T) {
	cases := map[string]string{
		`{"error":{"message":"Rate limit reached","type":"requests"}}`:                                                            "Rate limit reached",
		`{"error":"model 'llama9' not found, try pulling it first"}`:                                                              "model 'llama9' not found, try pulling it first",
		`{"object":"error","message":"max_tokens is too large","type":"BadRequestError"}`:                                         "max_tokens is too large",
		`{"detail":[{"loc":["body","messages"],"msg":"field required"}]}`:                                                         `[{"loc":["body","messages"],"msg":"field required"}]`,
		"<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>":                  "502 Bad Gateway nginx",
		"<html><head><title>Service Unavailable</title><style>p{}</style></head><body><p>Try later &amp; again</p></body></html>": "Service Unavailable: Try later & again",
		"upstream connect error\n": "upstream connect error",
		"":                         "",
	}
	for body, want := range cases {
		assert.Equal(t, want, serverMessage([]byte(body)), "body %q", body)
	}
}

// A think block is set aside only where a tag closes it outside the answer:
// a "</think>" inside a JSON string of the answer closes nothing (the
// reply below was accepted before dialects and once failed as parse after
// them).
func TestSplitThinking(t *testing.T) {
	const mentions = `{"calls":[{"tool":"search","args":{"query":"what does </think> mean"}}]}`
	for _, tc := range []struct{ name, content, answer, reasoning string }{
		{"json mentioning the tag", mentions, mentions, ""},
		{"fenced json mentioning the tag", "```json\n" + mentions + "\n```", "```json\n" + mentions + "\n```", ""},
		{"prose, then json mentioning the tag", "Here: " + mentions, "Here: " + mentions, ""},
		{"think block, then json mentioning the tag", "<think>look it up</think>\n" + mentions, "\n" + mentions, "look it up"},
		{"lone closing tag, then json mentioning the tag", "look it up\n</think>\n\n" + mentions, "\n\n" + mentions, "look it up\n"},
		{"reasoning holding a calls object", "maybe {\"calls\":[]}\n</think>{\"calls\":[{\"tool\":\"a\"}]}", "{\"calls\":[{\"tool\":\"a\"}]}", "maybe {\"calls\":[]}\n"},
		{"reasoning with a stray brace", "use {city: Paris\n</think>{\"calls\":[]}", "{\"calls\":[]}", "use {city: Paris\n"},
		{"json, then a lone tag", "{\"calls\":[]}\n</think>\n{\"calls\":[{\"tool\":\"a\"}]}", "\n{\"calls\":[{\"tool\":\"a\"}]}", "{\"calls\":[]}\n"},
		{"opening tag never closed", "<think>still thinking " + mentions, "", "still thinking " + mentions},
		{"no tag", `{"calls":[]}`, `{"calls":[]}`, ""},
		{"reasoning block with a draft", "<reasoning>draft {\"calls\":[]}</reasoning>{\"calls\":[{\"tool\":\"a\"}]}", "{\"calls\":[{\"tool\":\"a\"}]}", "draft {\"calls\":[]}"},
		{"thinking block", "<thinking>pick a</thinking>\n{\"calls\":[]}", "\n{\"calls\":[]}", "pick a"},
		{"harmony with its tokens", "<|channel|>analysis<|message|>draft {\"calls\":[]}<|end|><|start|>assistant<|channel|>final<|message|>{\"calls\":[{\"tool\":\"a\"}]}<|return|>",
			"{\"calls\":[{\"tool\":\"a\"}]}", "draft {\"calls\":[]}\n"},
		{"harmony commentary with a recipient", "<|channel|>commentary to=functions.a <|constrain|>json<|message|>{\"x\":1}<|call|><|channel|>final<|message|>{\"calls\":[]}",
			"{\"calls\":[]}", "{\"x\":1}\n"},
		{"harmony without a final channel", "<|channel|>analysis<|message|>still thinking", "", "still thinking\n"},
		{"harmony with its tokens stripped", "analysisThe user wants a. {\"calls\":[]}assistantfinal{\"calls\":[{\"tool\":\"a\"}]}",
			"{\"calls\":[{\"tool\":\"a\"}]}", "analysisThe user wants a. {\"calls\":[]}"},
		{"a reply that names the word analysis", `analysis: {"calls":[]}`, `analysis: {"calls":[]}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer, reasoning := splitThinking(tc.content)
			assert.Equal(t, tc.answer, answer)
			assert.Equal(t, tc.reasoning, reasoning)
		})
	}
	calls, _, err := parseReply(func() string { a, _ := splitThinking(mentions); return a }())
	require.NoError(t, err)
	require.Len(t, calls, 1)
	assert.Equal(t, `{"query":"what does </think> mean"}`, string(calls[0].Args))
}

// A reply of unbalanced braces before a closing tag does not make the
// think-block search quadratic: its scanning is bounded, and past the bound
// the first tag counts.
func TestSplitThinkingBoundedWork(t *testing.T) {
	content := strings.Repeat("{", 1<<20) + "</think>{\"calls\":[]}"
	done := make(chan struct{})
	go func() {
		defer close(done)
		answer, reasoning := splitThinking(content)
		assert.Equal(t, `{"calls":[]}`, answer)
		assert.Len(t, reasoning, 1<<20)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		require.FailNow(t, "splitThinking did not finish: unbounded scanning")
	}
}

// A reply of many unbalanced braces (up to the body limit) made the search
// for the one calls object quadratic: its scanning is bounded, and a reply
// that exhausts the bound is a parse failure, never a guess. A reply with a
// few stray braces is still read.
func TestCallsCandidatesBoundedWork(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _, err := parseReply(strings.Repeat("{", 1<<20) + `{"calls":[]}`)
		assert.ErrorContains(t, err, "too many unbalanced braces")
		calls, _, err := parseReply(`Sure { here it is: {"calls":[{"tool":"a","args":{}}]} and { more`)
		assert.NoError(t, err)
		assert.Len(t, calls, 1)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		require.FailNow(t, "parseReply did not finish: unbounded scanning")
	}
}

// Trailing commas before "}" or "]" outside strings are the one repair; a
// comma inside a string is the answer's own, and nothing else is guessed.
func TestTrailingCommaRepair(t *testing.T) {
	for _, tc := range []struct {
		name, content, args string
		repaired            int
	}{
		{"object", `{"calls":[{"tool":"a","args":{"city":"Paris",}},]}`, `{"city":"Paris"}`, 2},
		{"fenced, with white space", "```json\n{\"calls\":[{\"tool\":\"a\",\"args\":{\"city\":\"Paris\" ,\n}}\n]}\n```", `{"city":"Paris"}`, 1},
		{"among prose", `Here you are: {"calls":[{"tool":"a","args":{"q":"x, }",},}]} hope it helps`, `{"q":"x, }"}`, 2},
		{"valid JSON is not touched", `{"calls":[{"tool":"a","args":{"q":"a,]"}}]}`, `{"q":"a,]"}`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls, _, repaired, err := readCalls(tc.content)
			require.NoError(t, err)
			require.Len(t, calls, 1)
			assert.Equal(t, tc.args, string(calls[0].Args))
			assert.Equal(t, tc.repaired, repaired)
		})
	}
	for _, bad := range []string{
		`{'calls':[]}`,                            // single quotes
		`{"calls":[{"tool":"a",,"args":{}}]}`,     // a doubled comma is not trailing
		`{"calls":[{"tool":"a" "args":{}}]}`,      // a missing comma
		`{"calls":[{"tool":"a",}],}{"calls":[],}`, // two candidates stay two
	} {
		_, _, _, err := readCalls(bad)
		assert.Error(t, err, bad)
	}
}
