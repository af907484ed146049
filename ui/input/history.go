package input

import (
	"strings"
)

// Remember adds a sent line to the history (not twice in a row).
func (in *Input) Remember(s string) {
	if strings.TrimSpace(s) != "" && (len(in.history) == 0 || in.history[len(in.history)-1] != s) {
		in.history = append(in.history, s)
	}
	in.histPos, in.draft = len(in.history), ""
}

// HasHistory reports whether anything was sent (or seeded) yet.
func (in *Input) HasHistory() bool { return len(in.history) > 0 }

// SeedHistory makes a resumed conversation's messages the history when
// nothing was sent yet in this session, so they can be sent again or
// edited.
func (in *Input) SeedHistory(sent []string) {
	for _, s := range sent {
		in.Remember(s)
	}
}

func (in *Input) onFirstRow() bool { return in.ta.Line() == 0 && in.ta.LineInfo().RowOffset == 0 }

func (in *Input) onLastRow() bool {
	li := in.ta.LineInfo()
	return in.ta.Line() == in.ta.LineCount()-1 && li.RowOffset >= li.Height-1
}

// browse moves through the history: back from the first row, forward from
// the last; past either end the cursor goes to the start or the end of
// the text, as in readline.
func (in *Input) browse(dir int) {
	next := in.histPos + dir
	if next < 0 || next > len(in.history) {
		if dir < 0 {
			in.ta.CursorStart()
		} else {
			in.ta.CursorEnd()
		}
		return
	}
	if in.histPos == len(in.history) {
		in.draft = in.Value()
	}
	in.histPos = next
	text := in.draft
	if next < len(in.history) {
		text = in.history[next]
	}
	in.ta.SetValue(text)
	in.changed()
}
