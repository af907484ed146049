package termtext

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Terminals do not all agree with Width: tmux 3.3a draws "👍🏽" in four
// cells and "❤️" in one where Width (and kitty, WezTerm, foot, Ghostty,
// Windows Terminal) say two. A row the terminal draws wider than the
// window wraps, scrolls the screen and leaves the title bar and panel
// borders out of place until the next full redraw. The screen is
// protected three ways: the program turns autowrap off (AutowrapOff), so
// a row drawn too wide is clipped at the window's edge instead of
// wrapping; TerminalRow starts every region of a row (the side panels)
// at its own column with an absolute cursor move, so a disagreement in
// the transcript cannot shift a panel border; and TerminalRow keeps
// bubbletea's renderer, which measures with ansi.StringWidth, from
// cutting or erasing the end of a row it measures narrower than Width.

// AutowrapOff and AutowrapOn are DECAWM: with autowrap off, text written
// at the last column overwrites it instead of wrapping to the next row.
const (
	AutowrapOff = "\x1b[?7l"
	AutowrapOn  = "\x1b[?7h"
)

// TerminalRow encodes one laid-out row for the terminal. cols are the
// columns (0-based, increasing) where a region after the first starts;
// each is reached with an absolute cursor move after erasing the rest of
// the line, so whatever the terminal made of the cells before it, the
// region starts where the layout put it. The result measures (by
// ansi.StringWidth, as bubbletea's renderer does) as Width(row): where
// that would be less, the row is led by as many blanks and a carriage
// return, which the row then overwrites.
func TerminalRow(row string, cols []int) string {
	var b strings.Builder
	from := 0
	for _, c := range cols {
		if c <= from {
			continue
		}
		b.WriteString(Cut(row, from, c))
		b.WriteString(ansi.EraseLineRight)
		b.WriteString(ansi.CursorHorizontalAbsolute(c + 1))
		from = c
	}
	if from == 0 {
		b.WriteString(row)
	} else {
		b.WriteString(Cut(row, from, Width(row)))
	}
	out := b.String()
	if d := Width(row) - ansi.StringWidth(out); d > 0 {
		out = strings.Repeat(" ", d) + "\r" + out
	}
	return out
}
