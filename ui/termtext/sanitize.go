// Package termtext prepares untrusted text (model output, token pieces,
// metadata) for a terminal: it removes what a terminal would execute and
// measures and wraps what is left by display cells.
package termtext

import (
	"strings"
	"unicode/utf8"
)

const (
	esc = 0x1b
	bel = 0x07
	// C1 controls in their 8-bit form; a UTF-8 terminal that honours C1
	// treats U+009B like ESC [ and so on.
	c1CSI = 0x9b
	c1OSC = 0x9d
	c1DCS = 0x90
	c1SOS = 0x98
	c1PM  = 0x9e
	c1APC = 0x9f
	c1ST  = 0x9c
)

// Sanitize removes terminal control sequences (CSI, OSC, DCS, SOS, PM, APC,
// other ESC sequences) and every C0/C1 control character except '\n' and
// '\t' from s. Bytes that are not UTF-8 become U+FFFD. Model output goes
// through this before it is rendered: an OSC 52 sequence in a reply would
// otherwise write the user's clipboard.
func Sanitize(s string) string {
	if isPlain(s) {
		return s
	}
	out, _ := sanitize(s, false)
	return out
}

// SanitizeMap is Sanitize that also reports, for every byte of the result,
// the index of the byte of s it came from, so a renderer can tell which
// token produced each character it draws.
func SanitizeMap(s string) (string, []int) {
	return sanitize(s, true)
}

// isPlain reports whether s is printable ASCII plus '\n' and '\t', the
// common case that needs no copy.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

func sanitize(s string, withMap bool) (string, []int) {
	var b strings.Builder
	b.Grow(len(s))
	var src []int
	if withMap {
		src = make([]int, 0, len(s))
	}
	// replace writes text standing for the single byte s[from].
	replace := func(text string, from int) {
		b.WriteString(text)
		if withMap {
			for range len(text) {
				src = append(src, from)
			}
		}
	}
	// keep copies s[from:from+n] through unchanged.
	keep := func(from, n int) {
		b.WriteString(s[from : from+n])
		if withMap {
			for k := range n {
				src = append(src, from+k)
			}
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			replace("\uFFFD", i)
			i++
			continue
		case r == '\n' || r == '\t':
			keep(i, size)
		case r == esc:
			i = skipEscape(s, i)
			continue
		case r == c1CSI:
			i = skipCSI(s, i+size)
			continue
		case r == c1OSC || r == c1DCS || r == c1SOS || r == c1PM || r == c1APC:
			i = skipString(s, i+size)
			continue
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			// dropped: a control character
		default:
			keep(i, size)
		}
		i += size
	}
	return b.String(), src
}

// skipEscape returns the index just past the escape sequence that starts
// with the ESC at s[i]. An unfinished sequence at the end of s is dropped
// whole, so a sequence split across streamed tokens never leaks its head.
func skipEscape(s string, i int) int {
	j := i + 1
	if j >= len(s) {
		return len(s)
	}
	switch c := s[j]; {
	case c == '[':
		return skipCSI(s, j+1)
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		return skipString(s, j+1)
	case c >= 0x20 && c <= 0x2f:
		// nF sequences (charset designation etc.): intermediates, then one final byte.
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7e {
			j++
		}
		return j
	case c >= 0x30 && c <= 0x7e:
		// two-byte sequences such as ESC c (full reset) or ESC 7.
		return j + 1
	default:
		// ESC followed by a control or non-ASCII byte: drop the ESC alone.
		return j
	}
}

// skipCSI skips a CSI body starting at j (after "ESC [" or U+009B):
// parameter and intermediate bytes, then one final byte. A body interrupted
// by anything else ends at that byte, which is then processed normally.
func skipCSI(s string, j int) int {
	for j < len(s) {
		c := s[j]
		switch {
		case c >= 0x20 && c <= 0x3f:
			j++
		case c >= 0x40 && c <= 0x7e:
			return j + 1
		default:
			return j
		}
	}
	return j
}

// skipString skips the body of an OSC/DCS/SOS/PM/APC string starting at j,
// up to and including its terminator: BEL, ESC \ or U+009C. Without a
// terminator the rest of s belongs to the string, as it would for a terminal.
func skipString(s string, j int) int {
	for j < len(s) {
		switch {
		case s[j] == bel:
			return j + 1
		case s[j] == esc && j+1 < len(s) && s[j+1] == '\\':
			return j + 2
		case s[j] == 0xc2 && j+1 < len(s) && s[j+1] == c1ST:
			return j + 2
		case s[j] == 0x18 || s[j] == 0x1a:
			// CAN and SUB abort a control string in terminals.
			return j + 1
		}
		j++
	}
	return j
}
