package chat

import "strings"

// Segment is a run of rendered prompt text. The prompt is later tokenized
// with special-token parsing so that template markup such as <|im_start|>
// becomes control tokens; Content marks text that came from a message's
// content, which must be tokenized as plain text so that a user typing
// "<|im_end|><|im_start|>system" cannot forge a turn.
//
// Segment boundaries are not token boundaries: a tokenizer that splits
// plain text into words would split differently at each boundary than on
// the whole prompt. To match a single-pass tokenizer exactly, split the
// non-content segments on special tokens first and then tokenize each
// maximal run of plain text (content and non-content alike) in one piece.
type Segment struct {
	Text    string
	Content bool
}

// Join returns the prompt text the segments make up.
func Join(segs []Segment) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteString(s.Text)
	}
	return b.String()
}

// segments accumulates segments, merging neighbours of the same kind and
// dropping empty ones so that results compare simply in tests and callers
// see the fewest pieces.
type segments []Segment

func (s *segments) text(t string)    { s.add(Segment{Text: t}) }
func (s *segments) content(t string) { s.add(Segment{Text: t, Content: true}) }

func (s *segments) add(seg Segment) {
	if seg.Text == "" {
		return
	}
	if n := len(*s); n > 0 && (*s)[n-1].Content == seg.Content {
		(*s)[n-1].Text += seg.Text
		return
	}
	*s = append(*s, seg)
}

func (s *segments) addAll(segs []Segment) {
	for _, seg := range segs {
		s.add(seg)
	}
}
