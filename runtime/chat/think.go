package chat

import "strings"

// The tags thinking models (Qwen3, DeepSeek-R1 and its distills, SmolLM3)
// put around their reasoning.
const (
	ThinkOpen  = "<think>"
	ThinkClose = "</think>"
)

// Reasoning is how a model marks its reasoning in a reply: the markup
// that opens and closes the block, and Headers, markup that begins the
// answer proper and is shown as neither.
type Reasoning struct {
	Open, Close string
	Headers     []string
	// Drop: earlier replies go back to the template as their answers
	// only (always so where there are Headers).
	Drop bool
}

var (
	// ThinkTags: Qwen3, DeepSeek-R1 and its distills, SmolLM3.
	ThinkTags = Reasoning{Open: ThinkOpen, Close: ThinkClose}
	// Harmony: gpt-oss writes its reasoning on the analysis channel,
	// then starts a final-channel message for the answer (or starts
	// there at once).
	Harmony = Reasoning{Open: "<|channel|>analysis<|message|>", Close: "<|end|>",
		Headers: []string{"<|start|>assistant<|channel|>final<|message|>", "<|channel|>final<|message|>"}}
	// Gemma4 writes its reasoning as "<|channel>thought\n…<channel|>"
	// before the answer; with enable_thinking=false its template
	// pre-fills the empty block. Earlier replies go back without it, as
	// its template's own history does.
	Gemma4 = Reasoning{Open: "<|channel>thought", Close: "<channel|>", Drop: true}
)

// ReasoningOf is the format a model with this chat template source writes:
// harmony where the template speaks in channels, Gemma 4's where it
// writes <|channel>thought, <think> tags otherwise.
func ReasoningOf(templateSrc string) Reasoning {
	switch {
	case strings.Contains(templateSrc, "<|channel|>"):
		return Harmony
	case strings.Contains(templateSrc, Gemma4.Open) || strings.Contains(templateSrc, Gemma4.Close):
		return Gemma4
	}
	return ThinkTags
}

// OpensThinking reports whether a rendered prompt leaves a <think> block
// open, so the reply starts inside the reasoning: DeepSeek-R1's template
// ends its generation prompt with "<think>\n". Only template markup counts:
// a tag a user typed is content.
func OpensThinking(segs []Segment) bool { return ThinkTags.Opens(segs) }

// Opens is OpensThinking for this format.
func (r Reasoning) Opens(segs []Segment) bool {
	open := false
	for _, s := range segs {
		if s.Content {
			continue
		}
		o, c := strings.LastIndex(s.Text, r.Open), strings.LastIndex(s.Text, r.Close)
		switch {
		case o > c:
			open = true
		case c > o:
			open = false
		}
	}
	return open
}

// ThinkSplitter separates a streamed reply into the reasoning inside its
// <think>…</think> block and the answer after it, as llama.cpp's reasoning
// parser does: the block counts only at the start of the reply (or when the
// prompt opened it), and a reply that never closes it is all reasoning.
// Tags are left out of both parts. A tag may arrive split over several
// tokens, so bytes that could begin one are held back until the next piece
// (or Flush) shows whether they do.
type ThinkSplitter struct {
	r       Reasoning
	inside  bool // within the block
	decided bool // past the point where a block could still open
	closed  bool // the block has just closed: the answer's leading blank space is dropped
	held    string
}

// NewThinkSplitter starts a reply; open says the prompt already opened the
// block (see OpensThinking).
func NewThinkSplitter(open bool) *ThinkSplitter { return ThinkTags.Splitter(open) }

// Splitter is NewThinkSplitter for this format.
func (r Reasoning) Splitter(open bool) *ThinkSplitter {
	return &ThinkSplitter{r: r, inside: open, decided: open}
}

// header matches text against the format's answer headers: the length of
// a whole one at its start, or whether text could still become one.
func (r Reasoning) header(text string) (n int, partial bool) {
	for _, h := range r.Headers {
		if strings.HasPrefix(text, h) {
			return len(h), false
		}
		if strings.HasPrefix(h, text) {
			partial = true
		}
	}
	return 0, partial
}

// Add takes the next piece of the reply and returns the text it adds to
// the reasoning and to the answer, and whether any of it (tags included)
// was part of the reasoning block.
func (s *ThinkSplitter) Add(piece string) (thought, answer string, thinking bool) {
	text := s.held + piece
	s.held = ""
	var th, an strings.Builder
	for text != "" {
		if s.inside {
			thinking = true
			if i := strings.Index(text, s.r.Close); i >= 0 {
				th.WriteString(text[:i])
				text = text[i+len(s.r.Close):]
				s.inside, s.closed = false, true
				continue
			}
			keep := partialSuffix(text, s.r.Close)
			th.WriteString(text[:len(text)-keep])
			s.held = text[len(text)-keep:]
			break
		}
		if s.decided {
			if s.closed {
				// As llama.cpp's parser, the answer starts at its first
				// non-blank byte (templates write "</think>\n\n").
				if text = strings.TrimLeft(text, " \t\r\n"); text == "" {
					break
				}
				// and after its header, where the format has one
				if n, partial := s.r.header(text); n > 0 {
					text = text[n:]
				} else if partial {
					s.held = text
					break
				}
				s.closed = false
			}
			an.WriteString(text)
			break
		}
		// Before any answer text: a block may still open, after
		// leading whitespace.
		lead := len(text) - len(strings.TrimLeft(text, " \t\r\n"))
		rest := text[lead:]
		n, partial := s.r.header(rest)
		switch {
		case strings.HasPrefix(rest, s.r.Open):
			thinking = true
			s.inside, s.decided = true, true
			text = rest[len(s.r.Open):]
		case n > 0: // the answer's header, with no reasoning before it
			s.decided = true
			text = rest[n:]
		case rest == "" || strings.HasPrefix(s.r.Open, rest) || partial:
			s.held = text
			text = ""
		default:
			s.decided = true
		}
	}
	return th.String(), an.String(), thinking
}

// Flush releases held bytes at the end of the reply: they were not a tag.
func (s *ThinkSplitter) Flush() (thought, answer string) {
	h := s.held
	s.held = ""
	if s.inside {
		return h, ""
	}
	return "", h
}

// Inside reports whether the reply is within the reasoning block now.
func (s *ThinkSplitter) Inside() bool { return s.inside }

// partialSuffix is the length of the longest suffix of text that is a
// proper prefix of tag.
func partialSuffix(text, tag string) int {
	for n := min(len(text), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(text, tag[:n]) {
			return n
		}
	}
	return 0
}

// SplitThinking splits a whole reply as ThinkSplitter would stream it:
// reasoning (tags left out) and answer. open says the prompt opened the
// block. A reply without a block has no reasoning.
func SplitThinking(reply string, open bool) (thought, answer string) {
	return ThinkTags.Split(reply, open)
}

// Split is SplitThinking for this format.
func (r Reasoning) Split(reply string, open bool) (thought, answer string) {
	s := r.Splitter(open)
	th, an, _ := s.Add(reply)
	fth, fan := s.Flush()
	return th + fth, an + fan
}
