package gguf

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrFormat is wrapped by every error about the contents of a file, so callers
// can tell a bad file from an I/O failure.
var ErrFormat = errors.New("malformed GGUF")

// FormatError names the file, the field (a key, a tensor, or a header part)
// and what was wrong with it.
type FormatError struct {
	Path  string
	Field string
	Msg   string
}

// Error is always one line with no control characters: the path comes from
// the user and the field and message may quote text from the file, and the
// result is printed straight to a terminal.
func (e *FormatError) Error() string {
	path := e.Path
	if needsEscape(path) {
		path = strconv.Quote(path)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", path, escape(e.Msg))
	}
	return fmt.Sprintf("%s: %s: %s", path, escape(e.Field), escape(e.Msg))
}

func unsafeRune(r rune, size int) bool {
	return (r == utf8.RuneError && size == 1) || r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) ||
		r == '\u2028' || r == '\u2029'
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, n) {
			return true
		}
		i += n
	}
	return false
}

// escape writes control characters, line separators and invalid UTF-8 as Go
// escapes, leaving everything else (including quotes from %q) alone.
func escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case unsafeRune(r, n):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func (e *FormatError) Unwrap() error { return ErrFormat }
