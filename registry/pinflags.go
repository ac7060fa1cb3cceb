package registry

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// The description flags.
const (
	// FlagInvisible: format characters (Unicode category Cf: zero-width
	// spaces and joiners, word joiners, tag characters, interlinear
	// annotation, musical formatting...), line and paragraph separators,
	// other default-ignorable code points (the combining grapheme joiner,
	// Hangul fillers), control characters other than tab and line breaks,
	// supplementary variation selectors, and two or more variation
	// selectors in a row (one after a character, as in an emoji, is fine),
	// and the blank-looking U+2800 (braille pattern blank).
	FlagInvisible   = "invisible_characters"
	FlagBidi        = "bidi_controls" // bidirectional overrides, embeddings, isolates and marks (Bidi_Control)
	FlagHTMLComment = "html_comment"  // <!-- ... --> hidden from rendered text
	// FlagHiddenMarkup: markup that renders as nothing yet carries text
	// or a target: an element styled display:none or visibility:hidden, an
	// empty markdown link "[](...)".
	FlagHiddenMarkup = "hidden_markup"
	// FlagBlankLines: a run of blankRunLimit or more blank lines, or of
	// spaceRunLimit or more spaces (ideographic and no-break spaces, tabs)
	// within a line, which pushes what follows out of a reviewer's view.
	FlagBlankLines = "blank_lines"
	// FlagConfusableName: the tool's name mixes scripts (Latin with
	// Cyrillic, Greek...) or holds a letter made to look like an ASCII one
	// (Cyrillic "а" in "reаd_file", fullwidth or mathematical letters), so
	// it can pass for another tool's name.
	FlagConfusableName = "confusable_name"
)

// blankRunLimit is how many blank lines in a row are flagged (FlagBlankLines):
// prose separates paragraphs by one, rarely two.
const blankRunLimit = 3

// descriptionFlags names what is suspicious in a text: what a person
// reviewing it would not see but a model reads.
func descriptionFlags(desc string) []string { return (*Pins)(nil).TextFlags(desc) }

// TextFlags names what is suspicious in texts that are not pinned but that
// a model reads (the Flag... constants but FlagConfusableName): hidden
// characters, HTML comments, long runs of blank lines. The MCP proxy
// scans the messages of the prompts it serves with it. It does not use p,
// which may be nil.
func (*Pins) TextFlags(texts ...string) []string {
	var h hiddenText
	for _, s := range texts {
		h.scan(s)
	}
	return h.flags()
}

// definitionFlags is descriptionFlags over every text of t a model or a
// client reads: its name (confusable too), description and title, every
// string of its input and output schemas (property names, descriptions,
// titles, enum values, defaults...) and of its MCP annotations.
func definitionFlags(t Tool) []string {
	var h hiddenText
	_, name := splitPinKey(t.Name)
	h.scan(name)
	h.confusable = confusableName(name)
	h.scan(t.Description)
	if title, ok := t.Metadata["title"].(string); ok {
		h.scan(title)
	}
	var schema any
	if json.Unmarshal(t.Parameters, &schema) == nil {
		h.scanJSON(schema)
	}
	for _, key := range []string{"outputSchema", "annotations"} {
		if a, ok := t.Metadata[key]; ok {
			var v any
			if b, err := json.Marshal(a); err == nil && json.Unmarshal(b, &v) == nil {
				h.scanJSON(v)
			}
		}
	}
	return h.flags()
}

// hiddenText collects the flags scan found.
type hiddenText struct {
	found      map[string]bool
	confusable bool
}

// flagOrder is the order flags are listed in.
var flagOrder = []string{FlagInvisible, FlagBidi, FlagHTMLComment, FlagHiddenMarkup, FlagBlankLines, FlagConfusableName}

func (h *hiddenText) flags() []string {
	var flags []string
	for _, f := range flagOrder {
		if h.found[f] || f == FlagConfusableName && h.confusable {
			flags = append(flags, f)
		}
	}
	return flags
}

func (h *hiddenText) set(flag string) {
	if h.found == nil {
		h.found = map[string]bool{}
	}
	h.found[flag] = true
}

// spaceRunLimit is how many spaces in a row within a line are flagged
// (FlagBlankLines): a text pushed off the right of a reviewer's view.
const spaceRunLimit = 32

// hiddenTextRules are the patterns of text a reviewer does not see (or
// sees elsewhere) but a model reads, one rule a row, each with the flag it
// raises. Characters that render as nothing are isInvisible's.
var hiddenTextRules = []struct {
	flag  string
	found func(string) bool
}{
	{FlagHTMLComment, func(s string) bool { return strings.Contains(s, "<!--") }},
	// <span style="display: none">, visibility:hidden, the hidden attribute.
	{FlagHiddenMarkup, regexp.MustCompile(`(?i)display\s*:\s*none|visibility\s*:\s*hidden|<[a-z][^>]*\shidden[\s=/>]`).MatchString},
	// [](https://...): a link with no text renders as nothing.
	{FlagHiddenMarkup, regexp.MustCompile(`\[[\s\x{3000}\x{00A0}]*\]\(`).MatchString},
	{FlagBlankLines, func(s string) bool { return blankRun(s) >= blankRunLimit }},
	{FlagBlankLines, regexp.MustCompile(`[ \t\x{00A0}\x{2007}\x{202F}\x{3000}]{` + strconv.Itoa(spaceRunLimit) + `,}`).MatchString},
	// A carriage return not ending a line sends a terminal back to the
	// line's start: what follows is drawn over what came before.
	{FlagInvisible, regexp.MustCompile(`\r([^\n]|$)`).MatchString},
}

// scanJSON scans every string of a decoded JSON value, object keys included.
func (h *hiddenText) scanJSON(v any) {
	switch v := v.(type) {
	case string:
		h.scan(v)
	case []any:
		for _, x := range v {
			h.scanJSON(x)
		}
	case map[string]any:
		for k, x := range v {
			h.scan(k)
			h.scanJSON(x)
		}
	}
}

func (h *hiddenText) scan(s string) {
	for _, rule := range hiddenTextRules {
		if !h.found[rule.flag] && rule.found(s) {
			h.set(rule.flag)
		}
	}
	selectors, afterChar := 0, false
	for _, r := range s {
		if isVariationSelector(r) {
			// One after a character selects its form (an emoji's
			// presentation, a CJK variant); alone at the start or in a
			// run they select nothing and can encode hidden bytes.
			selectors++
			if selectors > 1 || !afterChar {
				h.set(FlagInvisible)
			}
			continue
		}
		selectors, afterChar = 0, true
		switch {
		case unicode.Is(unicode.Bidi_Control, r):
			h.set(FlagBidi)
		case isInvisible(r):
			h.set(FlagInvisible)
		}
	}
}

// blankRun is the longest run of blank lines in s (lines of white space
// or blank-looking characters only; "\r\n" counts as one line break).
func blankRun(s string) int {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	longest, run := 0, 0
	for i, l := range lines {
		if i == 0 || i == len(lines)-1 {
			continue // the text's own start and end, not lines between text
		}
		if strings.TrimFunc(l, func(r rune) bool { return unicode.IsSpace(r) || r == brailleBlank || isInvisible(r) }) == "" {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// brailleBlank (U+2800) renders as nothing yet is neither white space nor a
// format character.
const brailleBlank = '\u2800'

// isVariationSelector: the variation selectors of the BMP (U+FE00-FE0F)
// and Mongolian's free variation selectors.
func isVariationSelector(r rune) bool {
	return (r >= 0xFE00 && r <= 0xFE0F) || (r >= 0x180B && r <= 0x180D) || r == 0x180F
}

// isInvisible reports a character that renders as nothing (FlagInvisible);
// bidirectional controls are checked before it.
func isInvisible(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r):
		return true
	case unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
		return true // U+034F, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, unassigned tags...
	case r >= 0xE0100 && r <= 0xE01EF:
		return true // the supplementary variation selectors
	case r == brailleBlank:
		return true
	}
	return false
}
