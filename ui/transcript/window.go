package transcript

// The window onto the transcript is anchored at a unit (the header of
// system prompt or welcome text, or one turn) and a row counted from that
// unit's first row, and a draw renders only the units from the anchor down
// to the bottom of the view, or from the end back when following. A
// conversation of a million turns, or one turn of 60 MB, costs a draw what
// is on screen (and, once, the turns scrolled through), not the whole of
// it: laying out every turn to count rows took minutes at load. Rows are
// cached per turn (renderTurn), so scrolling back over turns drawn before
// costs only their lookup.

// unitCount is how many units the transcript has: the header and one per
// turn, or in completion mode the one running text.
func (tr *Transcript) unitCount() int {
	if tr.completion {
		return 1
	}
	return tr.conv.Len() + 1
}

// unitRows is unit i's rows and the row of the selected token in them
// (-1 when none).
func (tr *Transcript) unitRows(i int) ([]string, int) {
	switch {
	case tr.completion:
		// One running text, drawn whole: kept for the rest of the draw,
		// which asks for it several times.
		if !tr.compValid {
			tr.compRows, tr.compSel = tr.completionLines(tr.width)
			tr.compValid = true
		}
		return tr.compRows, tr.compSel
	case i == 0:
		return tr.headerLines(tr.width), -1
	}
	r := tr.renderTurn(tr.conv.Turns()[i-1], tr.width)
	return r.lines, r.selLine
}

// unitLen is how many rows unit i has.
func (tr *Transcript) unitLen(i int) int {
	rows, _ := tr.unitRows(i)
	return len(rows)
}

// selectedUnit is the unit holding the inspector's selected token and its
// row there, ok=false when nothing is selected.
func (tr *Transcript) selectedUnit() (unit, row int, ok bool) {
	if !tr.cursor.Inspecting || tr.cursor.Turn == nil {
		return 0, 0, false
	}
	if tr.completion {
		_, sel := tr.unitRows(0)
		return 0, sel, sel >= 0
	}
	turns := tr.conv.Turns()
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i] == tr.cursor.Turn {
			_, sel := tr.unitRows(i + 1)
			return i + 1, sel, sel >= 0
		}
	}
	return 0, 0, false
}

// normalize moves an anchor (unit u, row r from its start, r may be out of
// the unit's rows) to the unit that row is in, stopping at the top.
func (tr *Transcript) normalize(u, r int) (int, int) {
	n := tr.unitCount()
	u = min(max(u, 0), n-1)
	for r < 0 && u > 0 {
		u--
		r += tr.unitLen(u)
	}
	if r < 0 {
		return 0, 0
	}
	for u < n-1 {
		l := tr.unitLen(u)
		if r < l {
			break
		}
		r -= l
		u++
	}
	return u, r
}

// bottomAnchor is the anchor that shows the last row at the bottom of
// the view (or the first row at the top, when all fits).
func (tr *Transcript) bottomAnchor() (int, int) {
	u, rows := tr.unitCount()-1, 0
	for {
		rows += tr.unitLen(u)
		if rows >= tr.height || u == 0 {
			return u, max(rows-tr.height, 0)
		}
		u--
	}
}

// place puts the anchor at (u, r), or at the bottom anchor when (u, r)
// would leave rows of the view empty below the last row, and records
// whether the view is at the bottom.
func (tr *Transcript) place(u, r int) {
	u, r = tr.normalize(u, r)
	// Rows from the anchor's unit to the end, counted only until the
	// view is full.
	need, have := r+tr.height, 0
	for i := u; i < tr.unitCount() && have <= need; i++ {
		have += tr.unitLen(i)
	}
	switch {
	case have > need:
		tr.anchorUnit, tr.anchorRow, tr.atBottom = u, r, false
	default:
		bu, br := tr.bottomAnchor()
		tr.anchorUnit, tr.anchorRow, tr.atBottom = bu, br, true
		// The anchor as asked may lie above the bottom one (the rows
		// fill the view exactly): keep it, it is the same place.
		if have == need {
			tr.anchorUnit, tr.anchorRow = u, r
		}
	}
}

// windowRows is the rows in view: height rows from the anchor (fewer at
// the end of a short transcript).
func (tr *Transcript) windowRows() []string {
	out := make([]string, 0, tr.height)
	r := tr.anchorRow
	for u := tr.anchorUnit; u < tr.unitCount() && len(out) < tr.height; u++ {
		rows, _ := tr.unitRows(u)
		if r < len(rows) {
			out = append(out, rows[r:min(len(rows), r+tr.height-len(out))]...)
		}
		r = max(r-len(rows), 0)
	}
	return out
}

// rowsBefore is how many rows the units before u have (rendering them).
func (tr *Transcript) rowsBefore(u int) int {
	n := 0
	for i := range u {
		n += tr.unitLen(i)
	}
	return n
}
