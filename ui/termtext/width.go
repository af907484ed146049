package termtext

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/rivo/uniseg"
)

// Every width in the UI comes from ClusterWidth, through Width, Truncate,
// Fit, Cut and Glyphs, so layout, wrapping, padding, truncation and the
// editor cannot disagree about a row.
//
// Text is split into grapheme clusters the way charmbracelet/x/ansi (and
// so lipgloss and bubbletea's renderer) splits it. A cluster is as wide as
// the larger of two maintained measures:
//   - clipperhouse/displaywidth, which ansi.StringWidth uses: emoji
//     sequences (ZWJ, skin tones, VS16, flags) are one wide cell pair, the
//     way current terminals draw them;
//   - rivo/uniseg, which counts spacing marks (Thai ำ in "น้ำ", Devanagari
//     ि in "कि") as the extra cell every terminal gives them, where
//     displaywidth counts the cluster's first code point only.
//
// Taking the larger means the renderer's own measure (ansi.StringWidth)
// never exceeds ours, so bubbletea never cuts a row we laid out, and a
// terminal that draws a cluster narrower leaves a blank cell instead of
// pushing the row past the window.

// ClusterWidth is the cells one grapheme cluster takes, given the width
// displaywidth reports for it.
func ClusterWidth(cluster string, dw int) int {
	if len(cluster) == 1 {
		return dw
	}
	return max(dw, uniseg.StringWidth(cluster))
}

// eachCluster calls fn for every escape sequence (width 0, esc true) and
// grapheme cluster of s, in order, until fn returns false.
func eachCluster(s string, fn func(seq string, w int, esc bool) bool) {
	var state byte
	for s != "" {
		// Printable ASCII not followed by a combining character is a
		// cluster of its own, one cell: most of every styled row.
		if c := s[0]; state == 0 && c >= 0x20 && c < 0x7f && (len(s) == 1 || s[1] < 0x80) {
			if !fn(s[:1], 1, false) {
				return
			}
			s = s[1:]
			continue
		}
		seq, w, n, next := ansi.DecodeSequence(s, state, nil)
		if n <= 0 {
			n, seq = 1, s[:1]
		}
		state = next
		esc := isControl(seq)
		if esc {
			w = 0
		} else {
			w = ClusterWidth(seq, w)
		}
		if !fn(seq, w, esc) {
			return
		}
		s = s[n:]
	}
}

// isControl reports whether a decoded piece is an escape sequence or a
// control character rather than printable text.
func isControl(seq string) bool {
	r, _ := utf8.DecodeRuneInString(seq)
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r == utf8.RuneError && len(seq) > 0 && seq[0] >= 0x80 && seq[0] <= 0x9f)
}

// Width is the number of terminal cells s occupies, ignoring escape
// sequences (styled text measures like its plain text).
func Width(s string) int {
	if isPrintableASCII(s) {
		return len(s)
	}
	w := 0
	eachCluster(s, func(_ string, cw int, _ bool) bool {
		w += cw
		return true
	})
	return w
}

func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// Truncate shortens s to at most w cells, ending with "…" when it cut
// something other than trailing blanks. Escape sequences are kept intact,
// also those after the cut, so styles are still closed.
func Truncate(s string, w int) string {
	return truncate(s, w, "…")
}

func truncate(s string, w int, tail string) string {
	if w <= 0 {
		return ""
	}
	total := Width(s)
	if total <= w {
		return s
	}
	// Blanks past w are padding: cut them without a tail.
	if Width(strings.TrimRight(ansi.Strip(s), " ")) <= w {
		tail = ""
	}
	tw := Width(tail)
	if tw > w {
		tail, tw = "", 0
	}
	var b strings.Builder
	col, cut := 0, false
	eachCluster(s, func(seq string, cw int, esc bool) bool {
		if esc {
			b.WriteString(seq)
			return true
		}
		if cut {
			return true
		}
		if col+cw > w-tw {
			cut = true
			b.WriteString(tail)
			return true
		}
		b.WriteString(seq)
		col += cw
		return true
	})
	return b.String()
}

// Cut returns the cells [from, to) of s, escape sequences included; a wide
// cluster that straddles either edge is replaced by spaces so the result
// is exactly to-from cells when s reaches that far.
func Cut(s string, from, to int) string {
	var b strings.Builder
	col := 0
	eachCluster(s, func(seq string, cw int, esc bool) bool {
		if esc {
			b.WriteString(seq)
			return true
		}
		end := col + cw
		switch {
		case end <= from || col >= to:
		case col >= from && end <= to:
			b.WriteString(seq)
		default:
			b.WriteString(strings.Repeat(" ", min(end, to)-max(col, from)))
		}
		col = end
		return true
	})
	return b.String()
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
