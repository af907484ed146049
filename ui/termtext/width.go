package termtext

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Width is the number of terminal cells s occupies, ignoring escape
// sequences (styled text measures like its plain text).
func Width(s string) int { return ansi.StringWidth(s) }

// Truncate shortens s to at most w cells, ending with "…" when it cut
// something. Escape sequences are kept intact.
func Truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if Width(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// Fit truncates s to w cells and pads it with spaces to exactly w, so rows
// placed side by side line up.
func Fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	s = Truncate(s, w)
	if pad := w - Width(s); pad > 0 {
		s += strings.Repeat(" ", pad)
	}
	return s
}

// FitLines returns exactly h lines, each exactly w cells wide: lines beyond
// h are dropped and missing ones are blank.
func FitLines(lines []string, w, h int) []string {
	if h <= 0 {
		return nil
	}
	out := make([]string, h)
	for i := range out {
		var l string
		if i < len(lines) {
			l = lines[i]
		}
		out[i] = Fit(l, w)
	}
	return out
}
