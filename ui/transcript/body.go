package transcript

import (
	"sort"
	"strings"
	"unicode/utf8"

	"vkchat/ui/inspector"
	"vkchat/ui/termtext"
)

// segText is a segment's place in the text bodyRender wraps: where its
// sanitized text starts, and for a turn with generated steps, the maps
// from each byte of that text to the raw byte it came from (src) and from
// raw bytes to steps (idx). Typed and loaded turns have no steps and need
// neither, so their cost is the text itself: maps of an int per byte made
// a 60 MB message take gigabytes to draw.
type segText struct {
	start    int
	src, idx []int
}

// maxPiece is the most of one line's bytes turned into glyphs at once; a
// longer line is wrapped piece by piece (see render), so a one-line
// message of 60 MB does not hold a glyph (tens of bytes) per byte.
var maxPiece = 16 << 10

// render returns the rows and the row of the selected token (-1 if none).
func (b bodyRender) render(segs []segment) ([]string, int) {
	texts := make([]segText, len(segs))
	var full string
	var text strings.Builder
	for si, s := range segs {
		var clean string
		var st segText
		if len(s.t.Steps) > 0 {
			clean, st.src = termtext.SanitizeMap(s.t.Content)
			st.idx = s.t.StepIndex()
		} else {
			clean = termtext.Sanitize(s.t.Content)
		}
		st.start = text.Len()
		texts[si] = st
		if len(segs) == 1 {
			full = clean // no copy of a lone segment
			break
		}
		text.WriteString(clean)
	}
	if len(segs) != 1 {
		full = text.String()
	}
	// tagOf is the segment and step of the glyph at byte off of full.
	tagOf := func(off int) (seg, step int) {
		seg = sort.Search(len(texts), func(i int) bool { return texts[i].start > off }) - 1
		st := texts[seg]
		if st.idx == nil {
			return seg, -1
		}
		return seg, st.idx[st.src[off-st.start]]
	}
	var rows []string
	selRow := -1
	inCode := false
	lineStart := 0
	for line := range strings.SplitSeq(full, "\n") {
		off := lineStart
		lineStart += len(line) + 1
		fence := isFence(line)
		code := inCode || fence
		if fence {
			inCode = !inCode
		}
		textW := b.width
		wrap := termtext.WrapWords
		if code {
			textW = max(b.width-2, 1)
			wrap = termtext.WrapHard
		}
		// A long line is wrapped a piece at a time: each piece's rows but
		// the last are final, and the last (the row being filled) is
		// wrapped again with the next piece. Tab stops in later pieces
		// count from the piece's start.
		var carry []termtext.Glyph
		lineRows := 0
		for rest, pieceOff := line, off; ; {
			cut := pieceEnd(rest)
			base := pieceOff
			gs := append(carry, termtext.Glyphs(rest[:cut], func(o int) int { return base + o })...)
			wrapped := wrap(gs, textW)
			rest, pieceOff = rest[cut:], pieceOff+cut
			last := rest == ""
			if !last {
				carry = carryOver(gs, wrapped[len(wrapped)-1], code)
				wrapped = wrapped[:len(wrapped)-1]
			}
			for _, row := range wrapped {
				rows = append(rows, b.row(row, segs, tagOf, code, fence, lineRows > 0, len(rows), &selRow))
				lineRows++
			}
			if last {
				break
			}
		}
	}
	return rows, selRow
}

// pieceEnd is where the next piece of a line ends: all of it when short,
// else past maxPiece bytes, between two ASCII characters (a grapheme
// cluster starts there), or failing that at a rune's start.
func pieceEnd(s string) int {
	if len(s) <= maxPiece {
		return len(s)
	}
	for i := maxPiece; i < len(s) && i < 2*maxPiece; i++ {
		if s[i] < utf8.RuneSelf && s[i-1] < utf8.RuneSelf {
			return i
		}
	}
	i := maxPiece
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

// carryOver is what of a piece's glyphs gs is wrapped again with the next
// piece: its last row, lastRow. Word wrapping drops the spaces at the end
// of its input, which the next piece may continue, so for prose the
// glyphs are taken from gs, from the row's first one to the end. Rows
// there never start with a space (but the line's first), and a glyph's
// tag is its byte offset, so the first glyph with the row's first tag is
// where it starts.
func carryOver(gs, lastRow []termtext.Glyph, code bool) []termtext.Glyph {
	if code || len(lastRow) == 0 {
		return append([]termtext.Glyph(nil), lastRow...)
	}
	k := sort.Search(len(gs), func(i int) bool { return gs[i].Tag >= lastRow[0].Tag })
	return append([]termtext.Glyph(nil), gs[k:]...)
}

// specClass is the class of a token with speculative fate f, c where it
// had none.
func specClass(f string, c textClass) textClass {
	switch f {
	case "accepted":
		return classSpecAccepted
	case "corrected":
		return classSpecCorrected
	case "bonus":
		return classSpecBonus
	}
	return c
}

// row draws one wrapped row: a gutter for code (a dashed one for a
// code row's continuation), then runs of glyphs of one class each. It
// notes the selected token's row (index rowIndex) in selRow.
func (b bodyRender) row(gs []termtext.Glyph, segs []segment, tagOf func(int) (int, int), code, fence, cont bool, rowIndex int, selRow *int) string {
	var sb strings.Builder
	if code {
		gutter := "│ "
		if cont {
			gutter = "╎ "
		}
		sb.WriteString(b.st.CodeGutter.Render(gutter))
	}
	runClass := textClass(-1)
	var run strings.Builder
	for _, g := range gs {
		seg, step := tagOf(g.Tag)
		var c textClass
		switch {
		case fence:
			c = classFence
		case code:
			c = classCode
		default:
			c = segs[seg].base
		}
		if step >= 0 {
			t := segs[seg].t
			switch {
			case b.heat:
				c = classHeat + textClass(inspector.HeatLevel(t, step, b.bySurprisal))
			case !code && !fence:
				c = specClass(string(t.Steps[step].Spec()), c)
			}
			if t == b.sel && step == b.step {
				c = classSelected
				if *selRow < 0 {
					*selRow = rowIndex
				}
			}
		}
		if c != runClass && run.Len() > 0 {
			sb.WriteString(b.style(runClass).Render(run.String()))
			run.Reset()
		}
		runClass = c
		run.WriteString(g.Text)
	}
	if run.Len() > 0 {
		sb.WriteString(b.style(runClass).Render(run.String()))
	}
	return sb.String()
}
