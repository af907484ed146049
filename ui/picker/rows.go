package picker

import (
	"path"
	"strings"

	"vkchat/models/store"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// The column texts of a usable model.
func arch(m store.Model) string   { return dash(m.Arch) }
func params(m store.Model) string { return store.FormatParams(m.Params) }
func quant(m store.Model) string  { return dash(m.Quant) }
func size(m store.Model) string   { return store.FormatSize(m.Size) }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// reason is the first line of why a model cannot be used: GGUF errors can
// be long, and the row has one line.
func reason(m store.Model) string {
	s, _, _ := strings.Cut(m.Err.Error(), "\n")
	return "unusable: " + s
}

const (
	cursorMark = "> " // the selection must show without colour, too
	gap        = "  "
	margin     = " "
)

// columns are the widths of the table's columns, sized to their contents
// so the table stays compact; the name column takes what is left.
type columns struct {
	name, arch, params, quant, size int
}

func measure(models []store.Model) columns {
	c := columns{name: len("NAME"), arch: len("ARCH"), params: len("PARAMS"), quant: len("QUANT"), size: len("SIZE")}
	for _, m := range models {
		c.name = max(c.name, termtext.Width(m.Name))
		if m.Err != nil {
			continue
		}
		c.arch = max(c.arch, termtext.Width(arch(m)))
		c.params = max(c.params, termtext.Width(params(m)))
		c.quant = max(c.quant, termtext.Width(quant(m)))
		c.size = max(c.size, termtext.Width(size(m)))
	}
	return c
}

// fit shrinks the name column so a row fits width cells; a name never
// gets fewer than 12, the row is cut instead.
func (c columns) fit(width int) columns {
	rest := len(margin) + len(cursorMark) + len(gap)*4 + c.arch + c.params + c.quant + c.size
	c.name = max(12, min(c.name, width-rest))
	return c
}

// row lays out one line of the table, without the margin and cursor.
func (c columns) row(name, arch, params, quant, size string) string {
	return c.nameCell(name) + c.rest(arch, params, quant, size)
}

func (c columns) nameCell(name string) string { return pad(cutName(name, c.name), c.name) }

// rest is the columns after the name; numbers align right.
func (c columns) rest(arch, params, quant, size string) string {
	return gap + pad(arch, c.arch) +
		gap + padLeft(params, c.params) +
		gap + pad(quant, c.quant) +
		gap + padLeft(size, c.size)
}

// header is the column titles, aligned with the rows.
func (c columns) header() string {
	return margin + strings.Repeat(" ", len(cursorMark)) + c.row("NAME", "ARCH", "PARAMS", "QUANT", "SIZE")
}

// cutName shortens a long name to w cells. In owner/repo/file the owner
// and the file name (with size and quant) tell models apart, so the middle
// goes first, then the start.
func cutName(s string, w int) string {
	sw := termtext.Width(s)
	if sw <= w {
		return s
	}
	if first, rest, ok := strings.Cut(s, "/"); ok && strings.Contains(rest, "/") {
		short := first + "/…/" + path.Base(rest)
		if termtext.Width(short) <= w {
			return short
		}
		s, sw = "…/"+path.Base(rest), termtext.Width("…/"+path.Base(rest))
		if sw <= w {
			return s
		}
	}
	return "…" + termtext.Cut(s, sw-w+1, sw)
}

func pad(s string, w int) string {
	return s + strings.Repeat(" ", max(0, w-termtext.Width(s)))
}

func padLeft(s string, w int) string {
	return strings.Repeat(" ", max(0, w-termtext.Width(s))) + s
}

// renderRow draws one model as a table row width cells wide. Unusable
// models are dimmed and say why in place of their columns.
func renderRow(st *theme.Styles, c columns, m store.Model, selected bool, width int) string {
	mark := strings.Repeat(" ", len(cursorMark))
	if selected {
		mark = cursorMark
	}
	var line string
	switch {
	case m.Err != nil:
		line = st.Dim.Render(mark + c.nameCell(m.Name) + gap + reason(m))
	case selected:
		line = st.Selected.Render(mark + c.row(m.Name, arch(m), params(m), quant(m), size(m)))
	default:
		line = mark + st.Value.Render(c.nameCell(m.Name)) + st.Meta.Render(c.rest(arch(m), params(m), quant(m), size(m)))
	}
	return termtext.Truncate(margin+line, width)
}
