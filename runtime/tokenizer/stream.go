package tokenizer

import "unicode/utf8"

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
// can never form a character are returned as U+FFFD straight away.
func (s *Stream) Add(id int32) string {
	s.buf = append(s.buf, s.t.piece(id)...)
	return s.drain(false)
}

// Flush returns whatever is held back, each leftover byte as U+FFFD, and
// resets the stream.
func (s *Stream) Flush() string { return s.drain(true) }

func (s *Stream) drain(all bool) string {
	var out []byte
	i := 0
	for i < len(s.buf) {
		rest := s.buf[i:]
		if !all && !utf8.FullRune(rest) {
			break
		}
		r, n := utf8.DecodeRune(rest)
		if r == utf8.RuneError && n <= 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
			i++
			continue
		}
		out = append(out, rest[:n]...)
		i += n
	}
	s.buf = append(s.buf[:0], s.buf[i:]...)
	return string(out)
}
