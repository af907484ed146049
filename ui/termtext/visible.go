package termtext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Visible renders a raw token piece so that every byte of it can be seen:
// a space is "␣", a newline "↵", a tab "⇥", other control bytes and bytes
// that are not UTF-8 (half of a multi-byte character) "\xNN", and C1 or
// other invisible code points "\uNNNN". Token pieces are shown this way
// in the probability panel, where " the" and "the" must look different.
func Visible(piece string) string {
	if piece == "" {
		return "∅"
	}
	var b strings.Builder
	for i := 0; i < len(piece); {
		r, size := utf8.DecodeRuneInString(piece[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02X`, piece[i])
		case r == ' ':
			b.WriteString("␣")
		case r == '\n':
			b.WriteString("↵")
		case r == '\t':
			b.WriteString("⇥")
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02X`, r)
		case !unicode.IsPrint(r):
			// C1 controls, format characters (bidi overrides, zero-width
			// joiners) and spaces other than ASCII's, which would look like
			// "␣" or like nothing at all.
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteString(piece[i : i+size])
		}
		i += size
	}
	return b.String()
}
