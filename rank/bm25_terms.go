package rank

import (
	"math"
	"unsafe"

	"github.com/toolselect/toolselect/registry"
)

// docTerms analyses documents one after another. It interns terms: every
// distinct term gets a small id (in order of first appearance), and every
// distinct raw word maps straight to its term id, so after the first
// occurrence of a word, analysing it costs one map read and no allocation.
// For one document it collects the distinct terms in order of appearance and
// their frequencies per field.
type docTerms struct {
	tk    tokenizer
	word  map[string]wordRef // raw lower-cased word -> its term and its own id
	ids   map[string]int32   // term -> term id
	terms []string           // term id -> term
	raws  []string           // raw word id -> raw word (words of stopwords excluded)

	// the current document
	slot  []int32  // term id -> index in order, valid when stamp matches cur
	stamp []uint32 // term id -> document stamp
	cur   uint32
	order []int32 // distinct term ids in order of appearance
	first []int32 // parallel to order: the raw word id of the term's first word
	tfs   [][numFields]uint8
	lens  [numFields]uint16

	field int // field of the text being analysed
	emit  func(w []byte)
	dec   []byte // schemaText's decoding buffer
}

// wordRef is what a raw word analyses to: its term id (-1 for a stopword) and
// the word's own id in docTerms.raws.
type wordRef struct{ term, raw int32 }

func newDocTerms() *docTerms {
	d := &docTerms{word: make(map[string]wordRef, 1024), ids: make(map[string]int32, 1024)}
	d.tk.glosses = map[string]string{}
	d.emit = d.addWord
	return d
}

func (d *docTerms) reset() {
	d.cur++
	if d.cur == 0 { // wrapped: forget every stamp
		clear(d.stamp)
		d.cur = 1
	}
	d.order = d.order[:0]
	d.first = d.first[:0]
	d.tfs = d.tfs[:0]
	d.lens = [numFields]uint16{}
}

// term returns the term of id.
func (d *docTerms) term(id int32) string { return d.terms[id] }

// addWord adds a raw word to the current field.
func (d *docTerms) addWord(w []byte) {
	ref, ok := d.word[string(w)]
	if !ok {
		sw := string(w) // one copy, for both the table and the map key
		ref = wordRef{term: -1, raw: -1}
		if t := termOf(w); t != "" {
			id, known := d.ids[t]
			if !known {
				id = int32(len(d.terms))
				d.ids[t] = id
				d.terms = append(d.terms, t)
				d.slot = append(d.slot, 0)
				d.stamp = append(d.stamp, 0)
			}
			ref = wordRef{term: id, raw: int32(len(d.raws))}
			d.raws = append(d.raws, sw)
		}
		d.word[sw] = ref
	}
	if ref.term >= 0 {
		d.add(d.field, ref.term, ref.raw)
	}
}

func (d *docTerms) add(f int, id, raw int32) {
	var i int32
	if d.stamp[id] == d.cur {
		i = d.slot[id]
	} else {
		i = int32(len(d.order))
		d.stamp[id] = d.cur
		d.slot[id] = i
		d.order = append(d.order, id)
		d.first = append(d.first, raw)
		d.tfs = append(d.tfs, [numFields]uint8{})
	}
	if d.tfs[i][f] < 255 {
		d.tfs[i][f]++
	}
	if d.lens[f] < math.MaxUint16 {
		d.lens[f]++
	}
}

// text analyses text into field f of the current document.
func (d *docTerms) text(f int, text string) {
	d.field = f
	d.tk.words(text, d.emit)
}

// analyzeEntry makes e the current document of d.
func analyzeEntry(e *registry.Entry, d *docTerms) {
	d.reset()
	entryText(e, &d.dec, d.text, nil)
}

// entryText calls emit with each searchable text of e and the field it is
// indexed under: the name (without its namespace), the namespace, the
// description, the schema's property names and texts, the tags. The string
// is only valid during the call. When done is not nil and says true, the rest
// is skipped (the schema is the costly part to read).
func entryText(e *registry.Entry, buf *[]byte, emit func(f int, text string), done func() bool) {
	t := e.Def()
	ns, local := splitNamespace(t.Name)
	emit(fieldName, local)
	emit(fieldTags, ns)
	emit(fieldDesc, t.Description)
	if done != nil && done() {
		return
	}
	if t.HasSchema() {
		b := func(s []byte) {
			if len(s) > 0 {
				emit(fieldParams, unsafe.String(&s[0], len(s)))
			}
		}
		schemaText(t.Parameters, buf, b, b)
	}
	for _, tag := range t.Tags {
		emit(fieldTags, tag)
	}
}

// surfaceWords returns, for each index term of e, the first word of e's text
// that analyses to it, as written there (lower-cased); a term with no such
// word is kept as is.
func surfaceWords(e *registry.Entry, terms []string) []string {
	out := append([]string(nil), terms...)
	want := make(map[string][]int, len(terms))
	for i, t := range terms {
		want[t] = append(want[t], i)
	}
	var (
		tk  tokenizer
		buf []byte
	)
	entryText(e, &buf, func(_ int, text string) {
		if len(want) == 0 {
			return
		}
		tk.words(text, func(w []byte) {
			if t := termOf(w); t != "" {
				if is, ok := want[t]; ok {
					for _, i := range is {
						out[i] = string(w)
					}
					delete(want, t)
				}
			}
		})
	}, func() bool { return len(want) == 0 })
	return out
}
