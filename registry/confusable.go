package registry

import (
	"unicode"

	"github.com/toolselect/toolselect/registry/internal/confusables"
)

// confusableName reports a name that can pass for another one
// (FlagConfusableName): its letters come from scripts that do not mix in
// ordinary names (Latin with Cyrillic, Greek, Armenian, Cherokee...), or it
// holds a letter made to look like an ASCII one (fullwidth, mathematical and
// letterlike forms, small capitals and other Latin lookalikes), or all its
// letters are lookalikes of ASCII ones from one other script ("рор" in
// Cyrillic). What passes for an ASCII character is Unicode's confusables
// for the characters MCP names allow (package confusables, generated). Names in one script that happen to share a few letters with
// Latin ("поиск") and Latin mixed with Han, kana or Hangul are not flagged.
func confusableName(name string) bool {
	scripts := map[*unicode.RangeTable]bool{}
	letters, lookalikes := 0, 0
	for _, r := range name {
		if r < 0x80 {
			if unicode.IsLetter(r) {
				scripts[unicode.Latin] = true
			}
			continue
		}
		_, passes := confusables.ToASCII[r]
		script := scriptOf(r)
		if latinForm(r) || passes && (script == nil || script == unicode.Latin) {
			// Another form of an ASCII character (fullwidth, mathematical,
			// ɑ), or a separator drawn like '_', '-' or '.' (U+2010,
			// U+FE4D, a no-break space): nothing but a lookalike.
			return true
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			continue
		}
		letters++
		if passes {
			lookalikes++
		}
		if script != nil {
			scripts[script] = true
		}
	}
	if letters > 0 && lookalikes == letters {
		return true
	}
	var odd int // scripts beyond the ones that mix in ordinary names
	for s := range scripts {
		if !mixesWithLatin[s] {
			odd++
		}
	}
	return odd > 1 || odd == 1 && scripts[unicode.Latin]
}

// mixesWithLatin are the scripts that appear beside Latin in ordinary names
// (Japanese, Chinese and Korean text) and beside each other.
var mixesWithLatin = map[*unicode.RangeTable]bool{
	unicode.Latin: true, unicode.Han: true, unicode.Hiragana: true, unicode.Katakana: true,
	unicode.Hangul: true, unicode.Bopomofo: true,
}

// scriptOf is r's script; nil for Common and Inherited characters.
func scriptOf(r rune) *unicode.RangeTable {
	for name, t := range unicode.Scripts {
		if name == "Common" || name == "Inherited" {
			continue
		}
		if unicode.Is(t, r) {
			return t
		}
	}
	return nil
}

// latinForm: a letter or digit that is another form of an ASCII one
// (fullwidth, mathematical alphanumerics, letterlike symbols, small
// capitals and phonetic lookalikes of Latin letters).
func latinForm(r rune) bool {
	switch {
	case r >= 0xFF10 && r <= 0xFF5A: // fullwidth digits and letters
		return true
	case r >= 0x1D400 && r <= 0x1D7FF: // mathematical alphanumeric symbols
		return true
	case r >= 0x2100 && r <= 0x214F && unicode.IsLetter(r): // letterlike: ℓ, ℮, K (Kelvin)...
		return true
	case r >= 0x1D00 && r <= 0x1D2B: // small capitals ᴀ ʙ ᴄ...
		return true
	case r >= 0x2070 && r <= 0x209C: // superscript and subscript letters and digits
		return true
	case r >= 0x24B6 && r <= 0x24E9: // circled letters
		return true
	}
	return false
}
