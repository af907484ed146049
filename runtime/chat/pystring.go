package chat

import (
	"strings"
	"unicode"
)

// isPySpace reports whether Python's str.strip() removes r. Public chat
// templates are written for Hugging Face's Python Jinja, whose strip and
// trim use this set; Go's unicode.IsSpace lacks the four information
// separators U+001C..U+001F that Python counts as whitespace.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

func pyStrip(s string) string { return strings.TrimFunc(s, isPySpace) }

// pyStripSegments applies Python's strip() to the concatenation of segs,
// keeping each surviving byte's segment. Templates such as Llama 2's strip
// a string built from markup and content together, so stripping must be
// able to cross from content into markup when content is all whitespace.
func pyStripSegments(segs []Segment) []Segment {
	out := append([]Segment(nil), segs...)
	for len(out) > 0 {
		out[0].Text = strings.TrimLeftFunc(out[0].Text, isPySpace)
		if out[0].Text != "" {
			break
		}
		out = out[1:]
	}
	for len(out) > 0 {
		last := len(out) - 1
		out[last].Text = strings.TrimRightFunc(out[last].Text, isPySpace)
		if out[last].Text != "" {
			break
		}
		out = out[:last]
	}
	return out
}
