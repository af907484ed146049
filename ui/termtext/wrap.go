package termtext

import (
	"github.com/charmbracelet/x/ansi"
)

// Glyph is one grapheme cluster of sanitized text with the cells it takes
// and a tag the caller uses to style it (which token, which turn).
type Glyph struct {
	Text  string
	Width int
	Tag   int
}

// TabWidth is how many cells a tab stop spans.
const TabWidth = 4

// Glyphs splits one line of sanitized text (no '\n') into grapheme
// clusters. tagAt gives the tag for the byte offset a cluster starts at.
// Tabs become spaces up to the next tab stop because terminals would
// otherwise move the cursor by an amount the layout cannot know.
func Glyphs(line string, tagAt func(off int) int) []Glyph {
	gs := make([]Glyph, 0, len(line))
	col, off := 0, 0
	rest := line
	for rest != "" {
		cluster, w := ansi.FirstGraphemeCluster(rest, ansi.GraphemeWidth)
		if cluster == "" {
			cluster = rest[:1]
		}
		rest = rest[len(cluster):]
		tag := tagAt(off)
		off += len(cluster)
		if cluster == "\t" {
			n := TabWidth - col%TabWidth
			for range n {
				gs = append(gs, Glyph{Text: " ", Width: 1, Tag: tag})
			}
			col += n
			continue
		}
		w = ClusterWidth(cluster, w)
		gs = append(gs, Glyph{Text: cluster, Width: w, Tag: tag})
		col += w
	}
	return gs
}

func isSpace(g Glyph) bool { return g.Text == " " }

// WrapWords breaks glyphs into rows of at most width cells at spaces,
// breaking words longer than a row. Spaces at a break are dropped. An
// empty line gives one empty row.
func WrapWords(gs []Glyph, width int) [][]Glyph {
	if width < 1 {
		width = 1
	}
	var rows [][]Glyph
	var cur []Glyph
	curW := 0
	flush := func() {
		for len(cur) > 0 && isSpace(cur[len(cur)-1]) {
			curW -= cur[len(cur)-1].Width
			cur = cur[:len(cur)-1]
		}
		rows = append(rows, cur)
		cur, curW = nil, 0
	}
	for i := 0; i < len(gs); {
		if isSpace(gs[i]) {
			if curW+1 <= width {
				cur = append(cur, gs[i])
				curW++
				i++
				continue
			}
			flush()
			for i < len(gs) && isSpace(gs[i]) {
				i++
			}
			continue
		}
		j, wordW := i, 0
		for j < len(gs) && !isSpace(gs[j]) {
			wordW += gs[j].Width
			j++
		}
		if curW+wordW <= width {
			cur = append(cur, gs[i:j]...)
			curW += wordW
			i = j
			continue
		}
		if curW > 0 {
			flush()
			continue
		}
		// A word wider than a row on a row of its own: break it.
		for i < j {
			g := gs[i]
			if curW+g.Width > width && curW > 0 {
				flush()
			}
			cur = append(cur, g)
			curW += g.Width
			i++
		}
	}
	if len(cur) > 0 || len(rows) == 0 {
		flush()
	}
	return rows
}

// WrapHard breaks glyphs into rows of at most width cells wherever a row is
// full, keeping every space: code keeps its indentation this way.
func WrapHard(gs []Glyph, width int) [][]Glyph {
	if width < 1 {
		width = 1
	}
	var rows [][]Glyph
	var cur []Glyph
	curW := 0
	for _, g := range gs {
		if curW+g.Width > width && curW > 0 {
			rows = append(rows, cur)
			cur, curW = nil, 0
		}
		cur = append(cur, g)
		curW += g.Width
	}
	return append(rows, cur)
}
