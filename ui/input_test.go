package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/termtext"
)

func TestInputEditing(t *testing.T) {
	tests := []struct {
		name    string
		keys    []string
		want    string
		wantPos int
	}{
		{"type", []string{"type:hello"}, "hello", 5},
		{"backspace", []string{"type:hello", "backspace", "backspace"}, "hel", 3},
		{"backspace at start", []string{"backspace"}, "", 0},
		{"left and insert", []string{"type:hllo", "left", "left", "left", "type:e"}, "hello", 2},
		{"delete", []string{"type:hello", "home", "delete"}, "ello", 0},
		{"ctrl+a ctrl+e", []string{"type:one two", "ctrl+a", "type:>", "ctrl+e", "type:<"}, ">one two<", 9},
		{"ctrl+u", []string{"type:one two", "left", "left", "ctrl+u"}, "wo", 0},
		{"ctrl+k", []string{"type:one two", "ctrl+a", "right", "ctrl+k"}, "o", 1},
		{"ctrl+w", []string{"type:one two  ", "ctrl+w"}, "one ", 4},
		{"alt+b alt+f", []string{"type:one two", "alt+b", "type:X", "alt+b", "alt+b", "alt+f", "type:Y"}, "oneY Xtwo", 4},
		{"home/end are per line", []string{"type:ab", "alt+enter", "type:cd", "home", "type:>"}, "ab\n>cd", 4},
		{"up and down keep the column", []string{"type:abcd", "alt+enter", "type:ef", "up", "type:X"}, "abXcd\nef", 3},
		{"down to a shorter line", []string{"type:abcd", "alt+enter", "type:e", "up", "end", "down", "type:X"}, "abcd\neX", 7},
		{"up on the first row goes to the start", []string{"type:abc", "up", "type:X"}, "Xabc", 1},
		{"paste keeps newlines, drops escapes", []string{"paste:a\r\nb\x1b[31mc\td\x00"}, "a\nbc    d", 9},
		{"space", []string{"type:a", "space", "type:b"}, "a b", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := NewInput()
			in.SetSize(40, 5)
			for _, k := range tt.keys {
				switch {
				case strings.HasPrefix(k, "type:"):
					for _, r := range strings.TrimPrefix(k, "type:") {
						in.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
					}
				case strings.HasPrefix(k, "paste:"):
					in.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(strings.TrimPrefix(k, "paste:")), Paste: true})
				case k == "alt+enter":
					in.InsertNewline()
				default:
					if !in.Update(keyMsg(k)) {
						t.Fatalf("key %q not handled", k)
					}
				}
			}
			if in.Value() != tt.want || in.pos != tt.wantPos {
				t.Fatalf("value %q pos %d, want %q pos %d", in.Value(), in.pos, tt.want, tt.wantPos)
			}
		})
	}
}

func TestInputWrapsAndScrolls(t *testing.T) {
	st := newTestModel(t, newFakeEngine(), Config{}).styles
	in := NewInput()
	in.SetSize(12, 3)
	in.SetValue(strings.Repeat("abcdefgh", 6)) // 48 cells in 9-cell rows
	rows := in.View(st)
	if len(rows) != 3 || in.Height() != 3 {
		t.Fatalf("%d rows, height %d", len(rows), in.Height())
	}
	for _, r := range rows {
		if termtext.Width(r) != 12 {
			t.Errorf("row %q is %d wide", r, termtext.Width(r))
		}
	}
	// The cursor is at the end, so the last rows are the ones shown.
	if !strings.Contains(rows[2], "fgh") {
		t.Errorf("not scrolled to the cursor: %q", rows)
	}
	in.Update(keyMsg("ctrl+a"))
	if rows = in.View(st); !strings.HasPrefix(rows[0], "> abcdefgha") {
		t.Errorf("not scrolled back to the top: %q", rows)
	}
	in.Reset()
	if in.Value() != "" || in.Height() != 1 {
		t.Error("reset")
	}
}

func TestInputWideCharacters(t *testing.T) {
	st := newTestModel(t, newFakeEngine(), Config{}).styles
	in := NewInput()
	in.SetSize(10, 4)
	in.SetValue("東京東京東京")
	for _, r := range in.View(st) {
		if termtext.Width(r) != 10 {
			t.Errorf("row %q is %d wide", r, termtext.Width(r))
		}
	}
}
