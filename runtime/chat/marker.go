package chat

import (
	"fmt"
	"strconv"
	"strings"
)

// marker makes the per-message placeholders "<prefix><index>e".
type marker struct{ prefix string }

// markerStem and markerDigits shape a prefix: "vkc", 8 hex digits, "m".
const (
	markerStem   = "vkc"
	markerDigits = 8
)

// newMarker picks the first prefix "vkcNNNNNNNNm" that no input contains.
// The inputs are scanned once for every prefix-shaped run they hold, and
// the first number not among them is taken: time linear in the inputs,
// whereas trying each candidate in turn against every input was
// quadratic on text made of such runs (1.2 MB of them took 81 s a turn).
func newMarker(src, bos, eos string, msgs []Message) marker {
	taken := map[uint64]bool{}
	collect := func(s string) {
		for {
			at := strings.Index(s, markerStem)
			if at < 0 {
				return
			}
			s = s[at+len(markerStem):]
			if len(s) > markerDigits && s[markerDigits] == 'm' {
				if n, err := strconv.ParseUint(s[:markerDigits], 16, 64); err == nil && isLowerHex(s[:markerDigits]) {
					taken[n] = true
				}
			}
		}
	}
	collect(src)
	collect(bos)
	collect(eos)
	for _, m := range msgs {
		collect(m.Role)
		collect(m.Content)
	}
	// At most len(taken) numbers are taken, so one of the first
	// len(taken)+1 is free.
	n := uint64(0)
	for taken[n] {
		n++
	}
	return marker{prefix: fmt.Sprintf("%s%0*xm", markerStem, markerDigits, n)}
}

// isLowerHex reports whether s is all 0-9a-f, the digits %x writes (a
// prefix with "A" in it is a different string and clashes with nothing).
func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func (m marker) hole(i int) string { return fmt.Sprintf("%s%de", m.prefix, i) }

// split cuts a marker render into the literal text around the holes and
// the message index of each hole; len(lits) == len(refs)+1.
func (m marker) split(shape string, n int) (lits []string, refs []int, ok bool) {
	rest := shape
	for {
		at := strings.Index(rest, m.prefix)
		if at < 0 {
			return append(lits, rest), refs, true
		}
		lits = append(lits, rest[:at])
		rest = rest[at+len(m.prefix):]
		digits := 0
		idx := 0
		for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' && digits < 10 {
			idx = idx*10 + int(rest[digits]-'0')
			digits++
		}
		if digits == 0 || digits >= len(rest) || rest[digits] != 'e' || idx >= n {
			return nil, nil, false
		}
		refs = append(refs, idx)
		rest = rest[digits+1:]
	}
}
