package chat

import (
	"fmt"
	"strings"
)

// marker makes the per-message placeholders "<prefix><index>e".
type marker struct{ prefix string }

func newMarker(src, bos, eos string, msgs []Message) marker {
	inputs := []string{src, bos, eos}
	for _, m := range msgs {
		inputs = append(inputs, m.Role, m.Content)
	}
	for n := 0; ; n++ {
		p := fmt.Sprintf("vkc%08xm", n)
		clash := false
		for _, in := range inputs {
			if strings.Contains(in, p) {
				clash = true
				break
			}
		}
		if !clash {
			return marker{prefix: p}
		}
	}
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
