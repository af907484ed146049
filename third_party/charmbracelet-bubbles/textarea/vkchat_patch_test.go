package textarea

// Regression tests for the vkchat patches (see NOTE-UPSTREAM.md at the
// module root); each fails on unpatched bubbles v1.0.0.

import (
	"errors"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// plainTextArea is a focused textarea of the given size with no prompt, line
// numbers or placeholder, so View's rows are the text's own.
func plainTextArea(width, height int) Model {
	m := New()
	m.Prompt = ""
	m.ShowLineNumbers = false
	m.SetWidth(width)
	m.SetHeight(height)
	m.Focus()
	return m
}

// viewRows is View's rows without styling or trailing blanks.
func viewRows(m Model) []string {
	rows := strings.Split(ansi.Strip(m.View()), "\n")
	for i := range rows {
		rows[i] = strings.TrimRight(rows[i], " ")
	}
	return rows
}

// Bug 1: "\r\n" was two line breaks.
func TestCRLFIsOneLineBreak(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Model)
	}{
		{"InsertString", func(m *Model) { m.InsertString("a\r\nb\r\n\r\nc\rd") }},
		{"SetValue", func(m *Model) { m.SetValue("a\r\nb\r\n\r\nc\rd") }},
		{"bracketed paste", func(m *Model) {
			*m, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("a\r\nb\r\n\r\nc\rd"), Paste: true})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := plainTextArea(20, 3)
			tt.edit(&m)
			// A lone "\r" is still a line break of its own.
			if got, want := m.Value(), "a\nb\n\nc\nd"; got != want {
				t.Errorf("value %q, want %q", got, want)
			}
		})
	}
}

// Bug 2: the scroll offset went stale when the text changed between Views.
func TestViewFollowsTheTextAsItChanges(t *testing.T) {
	m := plainTextArea(20, 3)
	m.View() // the viewport now holds a one-row text's content
	m.InsertString("1\n2\n3\n4\n5\n6")
	m, _ = m.Update(nil)
	if rows := viewRows(m); strings.Join(rows[:3], ",") != "4,5,6" {
		t.Errorf("after the text grew: rows %q, want the cursor's row 6 last", rows[:3])
	}
	// Delete "6", "5", "4" and "3" with their line breaks, a View after each
	// key as a program would draw it.
	for range 8 {
		m, _ = m.Update(tea.KeyMsg{Type: tea.KeyBackspace})
		m.View()
	}
	if m.Value() != "1\n2" {
		t.Fatalf("value %q", m.Value())
	}
	if rows := viewRows(m); strings.Join(rows[:3], ",") != "1,2," {
		t.Fatalf("after the text shrank: rows %q, want the text from its first row", rows[:3])
	}
}

// Bug 3: lines past the limit were dropped without a word.
func TestLineLimitIsReported(t *testing.T) {
	t.Run("insert", func(t *testing.T) {
		m := plainTextArea(20, 3)
		m.InsertString("fits\nfits")
		if m.Err != nil {
			t.Fatalf("an insert that fits set Err %v", m.Err)
		}
		m.Reset()
		m.InsertString(strings.Repeat("x\n", maxLines+2)) // maxLines+3 lines
		if m.LineCount() != maxLines {
			t.Fatalf("%d lines kept, want the limit %d", m.LineCount(), maxLines)
		}
		if !errors.Is(m.Err, ErrLineLimit) || !strings.Contains(m.Err.Error(), "at most 10000 lines; 3 did not fit") {
			t.Fatalf("Err %v, want ErrLineLimit naming the limit and the 3 lines left out", m.Err)
		}
	})
	t.Run("InsertNewline at MaxHeight", func(t *testing.T) {
		m := plainTextArea(20, 3) // MaxHeight stays at its default, 99
		m.InsertString(strings.Repeat("\n", defaultMaxHeight-1))
		if m.Err != nil {
			t.Fatalf("%d lines set Err %v", m.LineCount(), m.Err)
		}
		m, _ = m.Update(tea.KeyMsg{Type: tea.KeyEnter})
		if m.LineCount() != defaultMaxHeight {
			t.Fatalf("%d lines, want %d", m.LineCount(), defaultMaxHeight)
		}
		if !errors.Is(m.Err, ErrLineLimit) || !strings.Contains(m.Err.Error(), "at most 99 lines; 1 did not fit") {
			t.Fatalf("Err %v, want ErrLineLimit naming MaxHeight", m.Err)
		}
	})
}

// Bug 4: an Alt chord the KeyMap does not bind typed its letter.
func TestUnboundAltChordTypesNothing(t *testing.T) {
	m := plainTextArea(20, 3)
	m.InsertString("one two")
	for _, k := range []tea.KeyMsg{
		{Type: tea.KeyRunes, Runes: []rune("t"), Alt: true},
		{Type: tea.KeyRunes, Runes: []rune("x"), Alt: true},
		{Type: tea.KeySpace, Runes: []rune(" "), Alt: true},
	} {
		m, _ = m.Update(k)
		if m.Value() != "one two" {
			t.Fatalf("%s changed the text to %q", k, m.Value())
		}
	}
	// A bound Alt chord still works, and plain letters are still typed.
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("b"), Alt: true}) // word backward
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("t")})
	if m.Value() != "one ttwo" {
		t.Fatalf("alt+b then t: %q, want %q", m.Value(), "one ttwo")
	}
}

// TestVerticalMovesKeepTheColumnOverMarks: ↓ from column 6 of an ASCII
// line onto a line of Thai clusters (each two cells and three runes: a
// base, a combining mark, a spacing vowel) lands after the third cluster,
// column 6 again, not after two clusters as with go-runewidth's widths.
func TestVerticalMovesKeepTheColumnOverMarks(t *testing.T) {
	m := New()
	m.SetWidth(40)
	m.SetHeight(4)
	m.ShowLineNumbers = false
	m.Prompt = ""
	m.SetValue("abcdef\nน้ำน้ำน้ำน้ำ")
	m.row, m.col = 0, 6
	m.CursorDown()
	if m.row != 1 || m.col != 9 {
		t.Fatalf("after ↓ the cursor is at row %d rune %d, want row 1 rune 9 (three clusters)", m.row, m.col)
	}
	if got := m.LineInfo().CharOffset; got != 6 {
		t.Errorf("cell offset %d, want 6", got)
	}
	m.CursorUp()
	if m.row != 0 || m.col != 6 {
		t.Errorf("after ↑ the cursor is at row %d col %d, want row 0 col 6", m.row, m.col)
	}
	// "❤️" is two runes and two cells; "👍🏽" two runes and two cells.
	m.SetValue("abcdef\n❤️👍🏽❤️x")
	m.row, m.col = 0, 6
	m.CursorDown()
	if m.row != 1 || m.col != 6 {
		t.Errorf("after ↓ onto emoji the cursor is at row %d rune %d, want rune 6 (three clusters)", m.row, m.col)
	}
}

// Bug 6: ←/→, Backspace and Delete stepped by code point, so the cursor
// stopped inside a grapheme cluster (three presses across "น้ำ", a flag
// split into two regional indicators, a skin tone left without its hand)
// and Backspace left half a character behind.
func TestCursorStepsByGraphemeCluster(t *testing.T) {
	press := func(m *Model, k tea.KeyType, n int) {
		for range n {
			*m, _ = m.Update(tea.KeyMsg{Type: k})
		}
	}
	clusters := []struct {
		name, text string
	}{
		{"Thai letter with two marks", "น้ำ"},
		{"flag", "🇹🇭"},
		{"skin tone", "👍🏽"},
		{"family (ZWJ)", "👨‍👩‍👧"},
		{"emoji with VS16", "❤️"},
		{"e with a combining acute", "e\u0301"},
	}
	for _, c := range clusters {
		t.Run(c.name, func(t *testing.T) {
			m := plainTextArea(40, 3)
			line := "a" + c.text + "b"
			runes := len([]rune(c.text))
			m.SetValue(line)
			m.CursorStart()
			press(&m, tea.KeyRight, 1)
			if m.col != 1 {
				t.Fatalf("→ over a: column %d", m.col)
			}
			press(&m, tea.KeyRight, 1)
			if m.col != 1+runes {
				t.Errorf("one → across %q lands at rune %d, want %d (past the cluster)", c.text, m.col, 1+runes)
			}
			press(&m, tea.KeyLeft, 1)
			if m.col != 1 {
				t.Errorf("one ← back across %q lands at rune %d, want 1", c.text, m.col)
			}
			press(&m, tea.KeyDelete, 1)
			if got := m.Value(); got != "ab" {
				t.Errorf("Delete before %q leaves %q, want %q", c.text, got, "ab")
			}
			m.SetValue(line)
			m.CursorEnd()
			press(&m, tea.KeyLeft, 1)
			press(&m, tea.KeyBackspace, 1)
			if got := m.Value(); got != "ab" || m.col != 1 {
				t.Errorf("Backspace after %q leaves %q with the cursor at %d, want %q at 1", c.text, got, m.col, "ab")
			}
		})
	}
	// Inside a cluster (a column set by hand): ← goes to its start, → to its end.
	m := plainTextArea(40, 3)
	m.SetValue("xน้ำy")
	m.SetCursor(2)
	press(&m, tea.KeyLeft, 1)
	if m.col != 1 {
		t.Errorf("← from inside a cluster lands at %d, want its start 1", m.col)
	}
	m.SetCursor(2)
	press(&m, tea.KeyRight, 1)
	if m.col != 4 {
		t.Errorf("→ from inside a cluster lands at %d, want its end 4", m.col)
	}
	// The line ends still join lines as before.
	m.SetValue("a\n🇹🇭")
	m.row, m.col = 1, 0
	press(&m, tea.KeyLeft, 1)
	if m.row != 0 || m.col != 1 {
		t.Errorf("← at a line's start goes to row %d col %d, want the end of row 0", m.row, m.col)
	}
	press(&m, tea.KeyRight, 2)
	if m.row != 1 || m.col != 2 {
		t.Errorf("→→ from there lands at row %d col %d, want past the flag on row 1", m.row, m.col)
	}
}
