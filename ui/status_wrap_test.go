package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// TestLongStatusWraps: a status message wider than the transcript (the
// --ctx warning, a refused paste) wraps under the separator instead of
// being cut at the width, and the screen keeps its size.
func TestLongStatusWraps(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		w, hgt := size[0], size[1]
		eng := newFakeEngine()
		eng.info.ContextSize, eng.info.TrainContext = 100000, 2048
		warn := eng.info.ContextWarning()
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(w, hgt)
		check := func(what, msg string) {
			t.Helper()
			view := ansi.Strip(m.View())
			checkScreen(t, m.View(), w, hgt)
			l := m.layout()
			rows := m.separator(l.mainW, l.sepH)
			var shown []string
			for _, r := range rows {
				r = strings.TrimSpace(strings.Trim(ansi.Strip(r), "─ "))
				if !strings.Contains(view, r) {
					t.Errorf("%dx%d: status row %q is not on screen", w, hgt, r)
				}
				shown = append(shown, r)
			}
			if got, want := strings.Join(shown, " "), strings.Join(strings.Fields(msg), " "); got != want {
				t.Errorf("%dx%d: %s shows as %q, want it whole: %q\n%s", w, hgt, what, got, want, view)
			}
		}
		if !strings.Contains(m.status.text, "larger than") {
			t.Fatalf("no --ctx warning at start: %q", m.status.text)
		}
		check("the --ctx warning", warn)

		h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(strings.Repeat("x", 70<<10)), Paste: true})
		if !strings.Contains(m.status.text, "paste refused") {
			t.Fatalf("no paste refusal: %q", m.status.text)
		}
		check("the paste refusal", m.status.text)
	}
}

// TestHelpKeepsCommandsApart: at 80 columns every command in F1 and /help
// stands apart from its description (a gap of two, or a row of its own).
func TestHelpKeepsCommandsApart(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	h := newHarness(t, m)
	h.size(80, 24)
	h.key("f1")
	lines := m.pane.Lines(m.styles, m.helpContent(), m.layout().mainW)
	for _, c := range m.cmds.Commands() {
		found := false
		for _, l := range lines {
			l = ansi.Strip(l)
			if !strings.HasPrefix(l, c.Usage()) {
				continue
			}
			found = true
			if rest := l[len(c.Usage()):]; rest != "" && !strings.HasPrefix(rest, "  ") {
				t.Errorf("%q runs into its description: %q", c.Usage(), l)
			}
			if ansi.StringWidth(l) > 80 {
				t.Errorf("row wider than 80: %q", l)
			}
			break
		}
		if !found {
			t.Errorf("%q not in the help", c.Usage())
		}
	}
}
