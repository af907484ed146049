package ui

import (
	"strconv"
	"strings"

	"vkchat/ui/termtext"
)

// setStop is /stop [TEXT]: TEXT is added to the stop strings, which end a
// reply where its answer writes one (llama.cpp's "stop"); without TEXT
// they are cleared. \n, \t and \\ are read as in Go strings so a line
// break can be typed.
func (m *Model) setStop(text string) {
	if text == "" {
		m.stops = nil
		m.setStatus("no stop strings: replies end where the model ends them")
		return
	}
	s := unescapeStop(text)
	for _, have := range m.stops {
		if have == s {
			m.setStatus("already a stop string: " + m.stopList())
			return
		}
	}
	m.stops = append(m.stops, s)
	m.setStatus("replies stop at " + m.stopList() + " · /stop alone clears")
}

// stopList shows the stop strings quoted, control characters escaped.
func (m *Model) stopList() string {
	q := make([]string, len(m.stops))
	for i, s := range m.stops {
		q[i] = termtext.Sanitize(strconv.Quote(s))
	}
	return strings.Join(q, ", ")
}

// unescapeStop reads \n, \t and \\ in a typed stop string; any other
// backslash stays as typed.
func unescapeStop(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			case 't':
				b.WriteByte('\t')
				i++
				continue
			case '\\':
				b.WriteByte('\\')
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
