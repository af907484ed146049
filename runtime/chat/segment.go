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
// see the fewest pieces. A run of one kind is joined once, when it ends:
// appending each piece to the run's text copied the run every time, which
// is quadratic in a template that prints content back to back (150,000
// copies of one message took minutes to merge, outside every render limit).
type segments struct {
	done      []Segment
	run       []string
	inContent bool // the kind of the run being built
}

func (s *segments) text(t string)    { s.add(Segment{Text: t}) }
func (s *segments) content(t string) { s.add(Segment{Text: t, Content: true}) }

func (s *segments) add(seg Segment) {
	if seg.Text == "" {
		return
	}
	if len(s.run) > 0 && s.inContent != seg.Content {
		s.flush()
	}
	s.run = append(s.run, seg.Text)
	s.inContent = seg.Content
}

func (s *segments) addAll(segs []Segment) {
	for _, seg := range segs {
		s.add(seg)
	}
}

func (s *segments) flush() {
	if len(s.run) == 0 {
		return
	}
	s.done = append(s.done, Segment{Text: strings.Join(s.run, ""), Content: s.inContent})
	s.run = s.run[:0]
}

// list ends the last run and returns the segments; nil when all were empty.
func (s *segments) list() []Segment {
	s.flush()
	return s.done
}
