package ui

import (
	"strings"
	"unicode"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// Input is the multi-line message editor. bubbles/textarea would do, but
// it imports a clipboard package this module does not carry, so this is a
// small editor with the usual readline keys.
type Input struct {
	value       []rune
	pos         int // cursor, an index into value
	width       int
	maxHeight   int
	offset      int // first visual row shown
	focused     bool
	placeholder string
}

const inputPrompt = "> "

// NewInput returns a focused, empty editor.
func NewInput() Input { return Input{focused: true, maxHeight: 1, width: 20} }

// Value is the text typed so far.
func (in *Input) Value() string { return string(in.value) }

// SetValue replaces the text and puts the cursor at its end.
func (in *Input) SetValue(s string) {
	in.value = []rune(cleanInput(s))
	in.pos = len(in.value)
}

// Reset empties the editor.
func (in *Input) Reset() { in.value, in.pos, in.offset = nil, 0, 0 }

// SetSize sets the width in cells, prompt included, and the most rows the
// editor may grow to.
func (in *Input) SetSize(width, maxHeight int) {
	in.width, in.maxHeight = max(width, 1), max(maxHeight, 1)
}

// Focus and Blur say whether keys go to the editor (and the cursor shows).
func (in *Input) Focus() { in.focused = true }

// Blur hides the cursor.
func (in *Input) Blur() { in.focused = false }

// cleanInput turns pasted line endings into '\n' and tabs into spaces, and
// drops escape sequences and other controls (a paste from a terminal can
// carry colour codes): what the user sends should look as typed.
func cleanInput(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = termtext.Sanitize(s)
	return strings.ReplaceAll(s, "\t", strings.Repeat(" ", termtext.TabWidth))
}

func (in *Input) insert(s string) {
	rs := []rune(cleanInput(s))
	if len(rs) == 0 {
		return
	}
	v := make([]rune, 0, len(in.value)+len(rs))
	v = append(v, in.value[:in.pos]...)
	v = append(v, rs...)
	v = append(v, in.value[in.pos:]...)
	in.value = v
	in.pos += len(rs)
}

// InsertNewline breaks the line at the cursor.
func (in *Input) InsertNewline() { in.insert("\n") }

func (in *Input) deleteRange(from, to int) {
	from, to = max(from, 0), min(to, len(in.value))
	if from >= to {
		return
	}
	in.value = append(in.value[:from:from], in.value[to:]...)
	in.pos = from
}

func (in *Input) lineStart() int {
	i := in.pos
	for i > 0 && in.value[i-1] != '\n' {
		i--
	}
	return i
}

func (in *Input) lineEnd() int {
	i := in.pos
	for i < len(in.value) && in.value[i] != '\n' {
		i++
	}
	return i
}

func (in *Input) wordLeft() int {
	i := in.pos
	for i > 0 && unicode.IsSpace(in.value[i-1]) {
		i--
	}
	for i > 0 && !unicode.IsSpace(in.value[i-1]) {
		i--
	}
	return i
}

func (in *Input) wordRight() int {
	i := in.pos
	for i < len(in.value) && unicode.IsSpace(in.value[i]) {
		i++
	}
	for i < len(in.value) && !unicode.IsSpace(in.value[i]) {
		i++
	}
	return i
}

// Update applies an editing key and reports whether it was one.
func (in *Input) Update(msg tea.KeyMsg) bool {
	switch msg.Type {
	case tea.KeyRunes:
		if msg.Alt && !msg.Paste {
			switch string(msg.Runes) {
			case "b":
				in.pos = in.wordLeft()
				return true
			case "f":
				in.pos = in.wordRight()
				return true
			case "d":
				in.deleteRange(in.pos, in.wordRight())
				return true
			}
			return false
		}
		in.insert(string(msg.Runes))
	case tea.KeySpace:
		in.insert(" ")
	case tea.KeyBackspace, tea.KeyCtrlH:
		if msg.Alt {
			in.deleteRange(in.wordLeft(), in.pos)
		} else {
			in.deleteRange(in.pos-1, in.pos)
		}
	case tea.KeyDelete, tea.KeyCtrlD:
		in.deleteRange(in.pos, in.pos+1)
	case tea.KeyLeft, tea.KeyCtrlB:
		if msg.Alt {
			in.pos = in.wordLeft()
		} else {
			in.pos = max(in.pos-1, 0)
		}
	case tea.KeyRight, tea.KeyCtrlF:
		if msg.Alt {
			in.pos = in.wordRight()
		} else {
			in.pos = min(in.pos+1, len(in.value))
		}
	case tea.KeyCtrlLeft:
		in.pos = in.wordLeft()
	case tea.KeyCtrlRight:
		in.pos = in.wordRight()
	case tea.KeyHome, tea.KeyCtrlA:
		in.pos = in.lineStart()
	case tea.KeyEnd, tea.KeyCtrlE:
		in.pos = in.lineEnd()
	case tea.KeyCtrlU:
		in.deleteRange(in.lineStart(), in.pos)
	case tea.KeyCtrlK:
		in.deleteRange(in.pos, in.lineEnd())
	case tea.KeyCtrlW:
		in.deleteRange(in.wordLeft(), in.pos)
	case tea.KeyUp:
		in.moveRow(-1)
	case tea.KeyDown:
		in.moveRow(+1)
	default:
		return false
	}
	return true
}

// visualRow is one screen row of the editor: value[start:end].
type visualRow struct{ start, end int }

// rows wraps the text into screen rows. One cell per row is kept free so
// the cursor can sit after the last character without overflowing.
func (in *Input) rows() []visualRow {
	textW := max(in.width-len(inputPrompt)-1, 1)
	var rows []visualRow
	start, w := 0, 0
	for i, r := range in.value {
		if r == '\n' {
			rows = append(rows, visualRow{start, i})
			start, w = i+1, 0
			continue
		}
		rw := termtext.Width(string(r))
		if w+rw > textW && i > start {
			rows = append(rows, visualRow{start, i})
			start, w = i, 0
		}
		w += rw
	}
	return append(rows, visualRow{start, len(in.value)})
}

// cursorRow is the row holding the cursor; at a soft wrap the cursor
// belongs to the start of the next row.
func cursorRow(rows []visualRow, pos int) int {
	for i, r := range rows {
		if pos >= r.start && pos < r.end {
			return i
		}
		if pos == r.end && (i == len(rows)-1 || rows[i+1].start > r.end) {
			return i
		}
	}
	return len(rows) - 1
}

func (in *Input) moveRow(d int) {
	rows := in.rows()
	cr := cursorRow(rows, in.pos)
	nr := cr + d
	if nr < 0 {
		in.pos = 0
		return
	}
	if nr >= len(rows) {
		in.pos = len(in.value)
		return
	}
	col := 0
	for _, r := range in.value[rows[cr].start:in.pos] {
		col += termtext.Width(string(r))
	}
	t := rows[nr]
	p, w := t.start, 0
	for p < t.end {
		rw := termtext.Width(string(in.value[p]))
		if w+rw > col {
			break
		}
		w += rw
		p++
	}
	in.pos = p
}

// Height is how many rows View will draw.
func (in *Input) Height() int { return min(len(in.rows()), in.maxHeight) }

// View draws the editor, scrolled so the cursor is visible.
func (in *Input) View(st theme.Styles) []string {
	rows := in.rows()
	h := min(len(rows), in.maxHeight)
	cr := cursorRow(rows, in.pos)
	if cr < in.offset {
		in.offset = cr
	}
	if cr >= in.offset+h {
		in.offset = cr - h + 1
	}
	in.offset = min(max(in.offset, 0), max(len(rows)-h, 0))

	out := make([]string, 0, h)
	for i := in.offset; i < in.offset+h; i++ {
		prompt := strings.Repeat(" ", len(inputPrompt))
		if i == 0 {
			prompt = inputPrompt
		}
		line := st.Prompt.Render(prompt)
		if len(in.value) == 0 {
			if in.focused {
				line += st.Cursor.Render(" ")
			}
			line += st.Placeholder.Render(in.placeholder)
			out = append(out, termtext.Fit(line, in.width))
			continue
		}
		r := rows[i]
		text := in.value[r.start:r.end]
		if in.focused && i == cr {
			c := in.pos - r.start
			cur := " "
			var after []rune
			if c < len(text) {
				cur, after = string(text[c]), text[c+1:]
			}
			line += st.InputText.Render(string(text[:c])) + st.Cursor.Render(cur) + st.InputText.Render(string(after))
		} else {
			line += st.InputText.Render(string(text))
		}
		out = append(out, termtext.Fit(line, in.width))
	}
	return out
}
