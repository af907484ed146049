package engine

import "strings"

// stopMatcher finds the first stop string in a reply's answer as it
// grows. A stop string may arrive split over several tokens, so each check
// looks back far enough to see one that began in an earlier piece.
type stopMatcher struct {
	stops   []string
	longest int
	text    strings.Builder
}

func newStopMatcher(stops []string) *stopMatcher {
	m := &stopMatcher{}
	for _, s := range stops {
		if s != "" {
			m.stops = append(m.stops, s)
			m.longest = max(m.longest, len(s))
		}
	}
	return m
}

// add appends a piece of the answer and reports the stop string it
// completed, if any: the one that ends first.
func (m *stopMatcher) add(piece string) (string, bool) {
	if len(m.stops) == 0 || piece == "" {
		return "", false
	}
	before := m.text.Len()
	m.text.WriteString(piece)
	all := m.text.String()
	from := max(before-(m.longest-1), 0)
	window := all[from:]
	best, bestEnd := "", -1
	for _, s := range m.stops {
		if i := strings.Index(window, s); i >= 0 && (bestEnd < 0 || i+len(s) < bestEnd) {
			best, bestEnd = s, i+len(s)
		}
	}
	return best, bestEnd >= 0
}
