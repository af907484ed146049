package input

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// TestPatchedTextareaInUse fails when go.mod does not replace
// github.com/charmbracelet/bubbles with ./third_party/charmbracelet-bubbles:
// the editor relies on the copy's textarea fixes (its NOTE-UPSTREAM.md)
// and no longer works around them. Each case goes through a path of the
// editor that reaches the textarea unchanged.
func TestPatchedTextareaInUse(t *testing.T) {
	st := testStyles()
	top := func(in *Input) string { return strings.Join(in.View(st), "|") }
	tests := []struct {
		bug   string
		check func(in *Input) (got, want string)
	}{
		{"1: CRLF typed as runes is one line break", func(in *Input) (string, string) {
			in.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("a\r\nb")})
			return in.Value(), "a\nb"
		}},
		{"2: the view follows a pasted text to its cursor", func(in *Input) (string, string) {
			in.View(st)
			in.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("1\n2\n3\n4\n5\n6"), Paste: true})
			return top(in), "  4   |  5   |  6   "
		}},
		{"2: the view comes back to the top of a text that shrinks", func(in *Input) (string, string) {
			in.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("1\n2\n3\n4\n5\n6"), Paste: true})
			for range 8 {
				in.Update(keyMsg("backspace"))
				in.View(st)
			}
			return top(in), "> 1   |  2   "
		}},
		{"3: a cut-short paste is reported", func(in *Input) (string, string) {
			in.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(strings.Repeat("\n", 10000)), Paste: true})
			err := in.TakeError()
			return fmtErr(err), "the message was cut short: textarea: line limit reached: the text holds at most 10000 lines; 1 did not fit"
		}},
		{"4: an unbound Alt chord types nothing", func(in *Input) (string, string) {
			in.Update(keyMsg("alt+t"))
			return in.Value(), ""
		}},
		{"6: backspace takes a whole grapheme cluster", func(in *Input) (string, string) {
			in.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("aน้ำ🇹🇭b")})
			in.Update(keyMsg("left"))
			in.Update(keyMsg("backspace"))
			in.Update(keyMsg("left"))
			in.Update(keyMsg("delete"))
			return in.Value(), "ab"
		}},
	}
	for _, tt := range tests {
		in := New()
		in.SetSize(6, 3)
		if got, want := tt.check(&in); got != want {
			t.Errorf("bug %s: got %q, want %q; go.mod must replace github.com/charmbracelet/bubbles with ./third_party/charmbracelet-bubbles (see its NOTE-UPSTREAM.md)", tt.bug, got, want)
		}
	}
}

func fmtErr(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
