package tokenizer

import "strings"

// segment is a piece of the input: either a special token (id >= 0) or raw
// text still to be tokenized.
type segment struct {
	id   int32
	text string
}

// partition is llama.cpp's tokenizer_st_partition: for each special token,
// longest first, every raw segment is split around each occurrence of its
// text. Control and unknown tokens are only looked for when parseSpecial is
// set; user-defined tokens always are, as in llama.cpp and Hugging Face
// tokenizers, because they belong to the vocabulary's ordinary text. The
// exception is markup (tokenData.markup): control tokens llama.cpp retypes as
// user-defined only so they print, which it then also matches in user text.
func (t *Tokenizer) partition(text string, parseSpecial bool) []segment {
	segs := []segment{{id: -1, text: text}}
	for _, id := range t.special {
		td := &t.tokens[id]
		if !parseSpecial && (td.attr&(attrControl|attrUnknown) != 0 || td.markup) {
			continue
		}
		// Most special tokens occur nowhere; only rebuild the segment list
		// for one that does.
		first := -1
		for i, s := range segs {
			if s.id < 0 && strings.Contains(s.text, td.text) {
				first = i
				break
			}
		}
		if first < 0 {
			continue
		}
		next := append(make([]segment, 0, len(segs)+2), segs[:first]...)
		for _, s := range segs[first:] {
			if s.id >= 0 || !strings.Contains(s.text, td.text) {
				next = append(next, s)
				continue
			}
			rest := s.text
			for {
				i := strings.Index(rest, td.text)
				if i < 0 {
					if rest != "" {
						next = append(next, segment{id: -1, text: rest})
					}
					break
				}
				left := rest[:i]
				if td.attr&attrLStrip != 0 {
					for len(left) > 0 && isCSpace(left[len(left)-1]) {
						left = left[:len(left)-1]
					}
				}
				if left != "" {
					next = append(next, segment{id: -1, text: left})
				}
				next = append(next, segment{id: id})
				rest = rest[i+len(td.text):]
				if td.attr&attrRStrip != 0 {
					for len(rest) > 0 && isCSpace(rest[0]) {
						rest = rest[1:]
					}
				}
			}
		}
		segs = next
	}
	return segs
}
