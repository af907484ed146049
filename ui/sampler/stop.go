package sampler

import (
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/command"
	"vkchat/ui/termtext"
)

// setStop is /stop [TEXT]: TEXT is added to the stop strings, which end a
// reply where its answer writes one (llama.cpp's "stop"); without TEXT
// they are cleared. \n, \t and \\ are read as in Go strings so a line
// break can be typed.
func (s *Sampler) setStop(a command.Args) tea.Cmd {
	if a.Text == "" {
		s.Stops = nil
		s.status.Info("no stop strings: replies end where the model ends them")
		return nil
	}
	stop := unescapeStop(a.Text)
	for _, have := range s.Stops {
		if have == stop {
			s.status.Info("already a stop string: " + s.stopList())
			return nil
		}
	}
	s.Stops = append(s.Stops, stop)
	s.status.Info("replies stop at " + s.stopList() + " · /stop alone clears")
	return nil
}

// stopList shows the stop strings quoted, control characters escaped.
func (s *Sampler) stopList() string {
	q := make([]string, len(s.Stops))
	for i, stop := range s.Stops {
		q[i] = termtext.Sanitize(strconv.Quote(stop))
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
