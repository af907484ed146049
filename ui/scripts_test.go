package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"vkchat/ui/termtext"
)

// scriptReply is a reply whose tokens are text that has broken terminal
// layouts: Thai, Devanagari, Arabic, CJK, combining marks, ZWJ and
// skin-tone emoji, flags, tabs and control characters. Each token is also
// a candidate in the next-token panel.
var scriptReply = []string{
	"น้ำ", " नमस्ते", " दुनिया", "\n", "مرحبا", " بالعالم", " 日本語", " e\u0301a\u0308", " I", " ❤️", " it", " 👍🏽",
	"\n", "👨‍👩‍👧", " 🇯🇵🇫🇷", "\t", "tab", " bell\a", " \x1b[31mred", " done.",
}

// scriptText is typed into the editor.
const scriptText = "น้ำ नमस्ते दुनिया مرحبا 日本語 e\u0301 I ❤️ it 👍🏽 👨‍👩‍👧 🇯🇵"

func newScriptEngine() *fakeEngine {
	eng := newFakeEngine()
	eng.replies = [][]string{scriptReply, fakeReplyShort}
	for _, p := range scriptReply {
		eng.id(p)
	}
	return eng
}

// checkLayout asserts what a terminal needs from a screen: exactly h rows
// of exactly w cells, the title bar on the first, the side panels'
// border in its column on every row beside the transcript, and rows that
// bubbletea's renderer measures no wider than the layout did.
func checkLayout(t *testing.T, m *Model, name string, w, h int) string {
	t.Helper()
	view := m.View()
	rows := strings.Split(view, "\n")
	if len(rows) != h {
		t.Fatalf("%s: %d rows, want %d", name, len(rows), h)
	}
	for i, r := range rows {
		if got := termtext.Width(r); got != w {
			t.Errorf("%s: row %d is %d cells, want %d: %q", name, i, got, w, r)
		}
	}
	if !strings.HasPrefix(rows[0], " vkchat │") {
		t.Errorf("%s: the title is not on row 1: %q", name, rows[0])
	}
	if f := m.frame; f.split > 0 {
		for i := f.first; i < f.last; i++ {
			side := strings.TrimSpace(termtext.Cut(rows[i], f.split+1, w))
			if c := termtext.Cut(rows[i], f.split+1, f.split+2); side != "" && !strings.ContainsAny(c, "│╭╰") {
				t.Errorf("%s: row %d has %q where the panel border belongs: %q", name, i, c, rows[i])
			}
		}
	}
	for i, r := range strings.Split(onTerminal{m}.View(), "\n") {
		if got := ansi.StringWidth(r); got != w {
			t.Errorf("%s: bubbletea measures row %d as %d cells, want %d", name, i, got, w)
		}
	}
	return view
}

// TestScriptsKeepTheLayout sends the script corpus through the transcript,
// the editor, the next-token panel, the inspector and the help screen.
// Regenerate the goldens with go test ./ui -run TestScriptsKeepTheLayout -update.
func TestScriptsKeepTheLayout(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {120, 36}, {160, 48}} {
		name := fmt.Sprintf("%dx%d", sz.w, sz.h)
		m := newTestModel(t, newScriptEngine(), Config{})
		h := newHarness(t, m)
		h.size(sz.w, sz.h)
		h.say(scriptText)
		done := checkLayout(t, m, name+" done", sz.w, sz.h)
		for _, want := range []string{"น้ำ", "नमस्ते", "👍🏽", "🇯🇵"} {
			if !strings.Contains(done, want) {
				t.Errorf("%s: %q is not on screen", name, want)
			}
		}
		t.Run(name+"_done", func(t *testing.T) { golden.RequireEqual(t, []byte(done)) })

		h.typeText(scriptText + scriptText)
		checkLayout(t, m, name+" typing", sz.w, sz.h)
		h.key("ctrl+u")

		h.key("tab")
		for i := range len(scriptReply) {
			h.key("left")
			inspect := checkLayout(t, m, fmt.Sprintf("%s inspect step %d", name, len(scriptReply)-i), sz.w, sz.h)
			if i == 8 {
				t.Run(name+"_inspect", func(t *testing.T) { golden.RequireEqual(t, []byte(inspect)) })
			}
		}
		h.key("h")
		checkLayout(t, m, name+" heatmap", sz.w, sz.h)
		h.key("tab", "f1")
		checkLayout(t, m, name+" help", sz.w, sz.h)
	}
}
