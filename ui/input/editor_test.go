package input

import (
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"vkchat/ui/internal/uitest"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// pressInput applies scripted keys to an editor: "type:TEXT" types runes,
// "paste:TEXT" is a bracketed paste, "alt+enter" adds a line, anything else
// is a key name for keyMsg.
func pressInput(t *testing.T, in *Input, keys ...string) {
	t.Helper()
	for _, k := range keys {
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
			in.Update(keyMsg(k))
		}
	}
}

// withCursor is the editor's text with "|" at the cursor.
func withCursor(in *Input) string {
	lines := strings.Split(in.Value(), "\n")
	li := in.ta.LineInfo()
	row := []rune(lines[in.ta.Line()])
	col := min(li.StartColumn+li.ColumnOffset, len(row))
	lines[in.ta.Line()] = string(row[:col]) + "|" + string(row[col:])
	return strings.Join(lines, "\n")
}

func TestInputEditing(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want string // the text, "|" marking the cursor
	}{
		{"type", []string{"type:hello"}, "hello|"},
		{"backspace", []string{"type:hello", "backspace", "backspace"}, "hel|"},
		{"backspace at start", []string{"backspace"}, "|"},
		{"left and insert", []string{"type:hllo", "left", "left", "left", "type:e"}, "he|llo"},
		{"delete", []string{"type:hello", "home", "delete"}, "|ello"},
		{"ctrl+a ctrl+e", []string{"type:one two", "ctrl+a", "type:>", "ctrl+e", "type:<"}, ">one two<|"},
		{"ctrl+u", []string{"type:one two", "left", "left", "ctrl+u"}, "|wo"},
		{"ctrl+k", []string{"type:one two", "ctrl+a", "right", "ctrl+k"}, "o|"},
		{"ctrl+w", []string{"type:one two  ", "ctrl+w"}, "one |"},
		{"alt+b alt+f", []string{"type:one two", "alt+b", "type:X", "alt+b", "alt+b", "alt+f", "type:Y"}, "oneY| Xtwo"},
		{"alt+d", []string{"type:one two", "ctrl+a", "alt+d"}, "| two"},
		{"alt+backspace", []string{"type:one two", "alt+backspace"}, "one |"},
		{"home/end are per line", []string{"type:ab", "alt+enter", "type:cd", "home", "type:>"}, "ab\n>|cd"},
		{"up and down keep the column", []string{"type:abcd", "alt+enter", "type:ef", "up", "type:X"}, "abX|cd\nef"},
		{"down to a shorter line", []string{"type:abcd", "alt+enter", "type:e", "up", "end", "down", "type:X"}, "abcd\neX|"},
		{"up on the first row goes to the start", []string{"type:abc", "up", "type:X"}, "X|abc"},
		{"down on the last row goes to the end", []string{"type:abc", "home", "down", "type:X"}, "abcX|"},
		{"paste keeps newlines, drops escapes", []string{"paste:a\r\nb\x1b[31mc\td\x00"}, "a\nbc    d|"},
		{"space", []string{"type:a", "space", "type:b"}, "a b|"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := New()
			in.SetSize(40, 5)
			pressInput(t, &in, tt.keys...)
			if got := withCursor(&in); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// A new editor is one row high and draws at the size it was given.
func TestNewInputSize(t *testing.T) {
	st := testStyles()
	in := New()
	in.placeholder = "Message…"
	if rows := in.View(st); len(rows) != 1 || termtext.Width(rows[0]) != 20 || in.ta.Width() != 20-len(inputPrompt) {
		t.Fatalf("new editor: rows %q, textarea width %d", rows, in.ta.Width())
	}
}

// Keys the editor does not bind leave the text and the cursor alone.
func TestInputIgnoresUnknownAltChords(t *testing.T) {
	in := New()
	pressInput(t, &in, "type:ab", "left")
	for _, k := range []string{"alt+x", "alt+t", "alt+space", "tab", "esc", "f1"} {
		if in.Update(keyMsg(k)); withCursor(&in) != "a|b" {
			t.Errorf("%s: text %q", k, withCursor(&in))
		}
	}
}

func TestInputHistory(t *testing.T) {
	in := New()
	in.SetSize(40, 5)
	for _, s := range []string{"first", "two\nlines", "two\nlines", "third"} {
		in.Remember(s)
	}
	// A one-row draft is on its first row, so ↑ recalls at once.
	pressInput(t, &in, "type:draft")
	for _, st := range []struct {
		key, want string
	}{
		{"up", "third|"},
		{"up", "two\nlines|"}, // recalled once: repeats are not kept
		{"up", "two|\nlines"}, // inside a multi-line entry ↑ moves up a row first
		{"up", "first|"},
		{"up", "|first"}, // the oldest: ↑ goes to the start
		{"down", "two\nlines|"},
		{"down", "third|"},
		{"down", "draft|"}, // past the newest: the unsent line comes back
		{"down", "draft|"},
	} {
		pressInput(t, &in, st.key)
		if got := withCursor(&in); got != st.want {
			t.Fatalf("after %s: %q, want %q", st.key, got, st.want)
		}
	}
	in.Reset()
	pressInput(t, &in, "up")
	if in.Value() != "third" {
		t.Errorf("after a reset ↑ recalls %q, want the newest line", in.Value())
	}
}

// A paste past the textarea's 10,000-line limit keeps the lines that fit
// and says how many were left out.
func TestInputReportsAPasteCutAtTheLineLimit(t *testing.T) {
	in := New()
	pressInput(t, &in, "type:keep")
	pressInput(t, &in, "paste:x\n"+strings.Repeat("x\n", 10000)) // 10,002 lines in all
	if got := in.ta.LineCount(); got != 10000 || !strings.HasPrefix(in.Value(), "keepx\nx\n") {
		t.Fatalf("%d lines kept, starting %q; want 10000 from the text typed", got, in.Value()[:min(12, len(in.Value()))])
	}
	err := in.TakeError()
	if err == nil || !strings.Contains(err.Error(), "cut short") || !strings.Contains(err.Error(), "at most 10000 lines; 2 did not fit") {
		t.Fatalf("error %v, want one naming the limit and the 2 lines left out", err)
	}
	if in.TakeError() != nil {
		t.Error("the error is reported twice")
	}
	pressInput(t, &in, "type:y")
	if err := in.TakeError(); err != nil {
		t.Errorf("a key after the cut paste reported %v", err)
	}
}

// A paste up to the limit is taken and stays responsive; a 1 MiB paste is
// refused at once with a message.
func TestInputLargePaste(t *testing.T) {
	st := testStyles()
	in := New()
	in.SetSize(80, 8)
	start := time.Now()
	pressInput(t, &in, "paste:"+strings.Repeat("lorem ipsum dolor sit amet ", 1<<20/27))
	if in.Value() != "" {
		t.Fatalf("a 1 MiB paste was taken (%d bytes)", len(in.Value()))
	}
	if err := in.TakeError(); err == nil || !strings.Contains(err.Error(), "1024 KiB") || !strings.Contains(err.Error(), "64 KiB") {
		t.Fatalf("error %v, want the size and the limit", err)
	}
	refused := time.Since(start)

	fits := strings.Repeat("lorem ipsum dolor sit amet ", (maxInputBytes-1)/27)
	start = time.Now()
	pressInput(t, &in, "paste:"+fits)
	in.View(st)
	pasted := time.Since(start)
	start = time.Now()
	pressInput(t, &in, "type:!")
	rows := in.View(st)
	key := time.Since(start)
	if len(in.Value()) != len(fits)+1 || len(rows) != 8 || in.TakeError() != nil {
		t.Fatalf("value %d bytes, %d rows", len(in.Value()), len(rows))
	}
	t.Logf("1 MiB refused in %v; %d KiB paste and render %v, then a key and render %v", refused, len(fits)>>10, pasted, key)
	if key > 2*time.Second {
		t.Errorf("a key after a %d-byte paste took %v", len(fits), key)
	}
}

func TestInputWrapsAndScrolls(t *testing.T) {
	st := testStyles()
	in := New()
	in.SetSize(12, 3)
	in.SetValue(strings.Repeat("abcdefgh ", 6)) // 54 cells in 10-cell rows
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
	if strings.HasPrefix(rows[0], inputPrompt) {
		t.Errorf("not scrolled to the cursor: %q", rows)
	}
	in.Update(keyMsg("ctrl+a"))
	if rows = in.View(st); !strings.HasPrefix(rows[0], "> abcdefgh") {
		t.Errorf("not scrolled back to the top: %q", rows)
	}
	in.Reset()
	if in.Value() != "" || in.Height() != 1 {
		t.Error("reset")
	}
}

// After a tall text shrinks to fit, every row shows again from the top.
func TestInputShrinksBackToTheTop(t *testing.T) {
	st := testStyles()
	in := New()
	in.SetSize(20, 3)
	for i := 0; i < 6; i++ {
		pressInput(t, &in, "type:line", "alt+enter")
	}
	if in.Height() != 3 {
		t.Fatalf("height %d", in.Height())
	}
	for i := 0; i < 5; i++ {
		pressInput(t, &in, "backspace", "backspace", "backspace", "backspace", "backspace")
	}
	if in.Value() != "line\n" {
		t.Fatalf("value %q", in.Value())
	}
	rows := in.View(st)
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "> line") {
		t.Fatalf("rows %q: want the two lines from the top", rows)
	}
}

func TestInputWideCharacters(t *testing.T) {
	st := testStyles()
	in := New()
	in.SetSize(10, 4)
	in.SetValue("東京東京東京")
	for _, r := range in.View(st) {
		if termtext.Width(r) != 10 {
			t.Errorf("row %q is %d wide", r, termtext.Width(r))
		}
	}
}

// testStyles are the chat's styles drawn without colour, as the root's
// tests draw them, so rows compare as plain text.
func testStyles() theme.Styles {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	r.SetHasDarkBackground(true)
	return theme.New(r)
}

// keyMsg is uitest.KeyMsg.
func keyMsg(name string) tea.KeyMsg { return uitest.KeyMsg(name) }
