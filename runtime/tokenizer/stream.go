package tokenizer

// Stream turns generated tokens into text as they arrive. A character can be
// spread over several byte tokens, so bytes that may still become a valid
// UTF-8 character are held back until they do.
type Stream struct {
	t   *Tokenizer
	buf []byte
}

// NewStream starts an incremental detokenizer. Control tokens render as
// nothing, as in Decode.
func (t *Tokenizer) NewStream() *Stream { return &Stream{t: t} }

// Add appends the token and returns the text that is now complete. Bytes that
// can no longer form a character are returned as U+FFFD straight away.
func (s *Stream) Add(id int32) string {
	s.buf = append(s.buf, s.t.piece(id)...)
	return s.drain(false)
}

// Flush returns whatever is held back, an incomplete character as U+FFFD,
// and resets the stream.
func (s *Stream) Flush() string { return s.drain(true) }

// drain emits the complete prefix of buf. Ill-formed input becomes one U+FFFD
// per maximal subpart (Unicode's recommended practice, which Python's
// "replace" and browsers follow), so streamed text matches what a decoder
// of the whole byte string would print.
func (s *Stream) drain(all bool) string {
	var out []byte
	i := 0
	for i < len(s.buf) {
		n, st := utf8Prefix(s.buf[i:])
		switch {
		case st == utf8Valid:
			out = append(out, s.buf[i:i+n]...)
		case st == utf8Incomplete && !all:
			// Could still complete with the next token.
			s.buf = append(s.buf[:0], s.buf[i:]...)
			return string(out)
		default:
			out = append(out, "\uFFFD"...)
		}
		i += n
	}
	s.buf = s.buf[:0]
	return string(out)
}

type utf8Status int

const (
	utf8Valid utf8Status = iota
	utf8Invalid
	utf8Incomplete // well-formed so far, but p ends first
)

// utf8Prefix reads one character from the start of p and returns its length,
// or for ill-formed input the length of the maximal subpart (at least 1).
func utf8Prefix(p []byte) (int, utf8Status) {
	b := p[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF) // allowed range of the second byte
	switch {
	case b < 0x80:
		return 1, utf8Valid
	case b >= 0xC2 && b <= 0xDF:
		need = 1
	case b == 0xE0:
		need, lo = 2, 0xA0
	case b == 0xED:
		need, hi = 2, 0x9F
	case b >= 0xE1 && b <= 0xEF:
		need = 2
	case b == 0xF0:
		need, lo = 3, 0x90
	case b == 0xF4:
		need, hi = 3, 0x8F
	case b >= 0xF1 && b <= 0xF3:
		need = 3
	default:
		return 1, utf8Invalid
	}
	for k := 1; k <= need; k++ {
		if k >= len(p) {
			return k, utf8Incomplete
		}
		if p[k] < lo || p[k] > hi {
			return k, utf8Invalid
		}
		lo, hi = 0x80, 0xBF
	}
	return need + 1, utf8Valid
}
