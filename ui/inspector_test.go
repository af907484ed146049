package ui

import (
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"vkchat/ui/conversation"
	"vkchat/ui/theme"
)

func TestInspectorNavigation(t *testing.T) {
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(160, 48)
	h.say("first")
	h.say("second")
	first, second := m.conv.Turns()[1], m.conv.Turns()[3]
	n1, n2 := len(first.Steps), len(second.Steps)

	type want struct {
		turn *conversation.Turn
		step int
	}
	steps := []struct {
		key  string
		want want
	}{
		{"tab", want{second, n2 - 1}},
		{"right", want{second, n2 - 1}}, // the end stays the end
		{"left", want{second, n2 - 2}},
		{"home", want{second, 0}},
		{"left", want{first, n1 - 1}}, // crosses into the previous reply
		{"left", want{first, n1 - 2}},
		{"home", want{first, 0}},
		{"left", want{first, 0}}, // the start stays the start
		{"end", want{first, n1 - 1}},
		{"right", want{second, 0}},
	}
	for i, s := range steps {
		h.key(s.key)
		if m.focus != focusTranscript || m.insp.Turn() != s.want.turn || m.insp.Step() != s.want.step {
			t.Fatalf("step %d (%s): at turn %p step %d, want %p step %d", i, s.key, m.insp.Turn(), m.insp.Step(), s.want.turn, s.want.step)
		}
		// The panel shows that step's stored distribution, chosen token marked.
		info := mustStepInfo(t, s.want.turn, s.want.step)
		if m.insp.Probs.Chosen != info.ID || len(m.insp.Probs.Candidates) != len(info.Candidates) || m.insp.Probs.Candidates[0] != info.Candidates[0] {
			t.Fatalf("step %d: panel shows %+v, want step %d's candidates", i, m.insp.Probs, s.want.step)
		}
		if !strings.Contains(m.insp.Probs.Title, "inspecting step") {
			t.Fatalf("title %q", m.insp.Probs.Title)
		}
	}
	view := m.View()
	if !strings.Contains(view, "inspecting step 1/5") || !strings.Contains(view, "● Sure") {
		t.Errorf("inspected step not on screen:\n%s", view)
	}
	h.key("esc")
	if m.focus != focusInput || m.insp.Probs.Title != "step 5" {
		t.Fatalf("esc: focus %v, panel %q", m.focus, m.insp.Probs.Title)
	}
}

func TestInspectorTypingReturnsToInput(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	h := newHarness(t, m)
	h.size(100, 30)
	h.say("hi")
	h.key("tab")
	h.typeText("x")
	if m.focus != focusInput || m.input.Value() != "x" {
		t.Fatalf("focus %v, input %q", m.focus, m.input.Value())
	}
}

func TestInspectorScrollsToTheToken(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	h := newHarness(t, m)
	h.size(80, 24)
	h.say("one")
	h.say("two")
	h.say("three")
	// Replies alternate between the long and the short script: walk back
	// to the first token of the first reply, far above the bottom.
	h.key("tab", "home", "left", "home", "left", "home")
	if m.insp.Turn() != m.conv.Turns()[1] || m.insp.Step() != 0 {
		t.Fatalf("at %p step %d, want the first reply's first token", m.insp.Turn(), m.insp.Step())
	}
	m.View()
	m.layout()
	lines, sel := m.tr.Lines()
	if sel < 0 || sel >= len(lines) {
		t.Fatalf("selected row %d of %d", sel, len(lines))
	}
	if sel < m.tr.YOffset() || sel >= m.tr.YOffset()+m.layout().transcriptH {
		t.Fatalf("selected row %d not in view [%d, %d)", sel, m.tr.YOffset(), m.tr.YOffset()+m.layout().transcriptH)
	}
	if !strings.Contains(lines[sel], "Here") {
		t.Errorf("selected row %q does not hold the first token", lines[sel])
	}
}

// colourModel renders with a true-colour profile, for tests of styling.
func colourModel(t *testing.T, eng Engine) *Model {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	r.SetHasDarkBackground(true)
	m := newModel(eng, Config{StateDir: t.TempDir()}, r)
	return m
}

func TestHeatmapAndSelectionStyles(t *testing.T) {
	m := colourModel(t, newFakeEngine())
	h := newHarness(t, m)
	h.size(160, 48)
	h.say("hi")
	reply := m.conv.Last()
	plain := m.View()

	h.key("tab", "h")
	if !heatOn(m) {
		t.Fatal("h did not turn the heatmap on")
	}
	heat := m.View()
	if heat == plain {
		t.Fatal("the heatmap changed nothing")
	}
	// "Here" (step 0) must be drawn in the colour of its probability.
	lvl := theme.HeatLevel(reply.ChosenProb(0))
	if seq := strings.Split(m.styles.Heat[lvl].Render("X"), "X")[0]; seq == "" || !strings.Contains(heat, seq+"Here") {
		t.Errorf("step 0 (p=%.2f) not drawn with heat level %d", reply.ChosenProb(0), lvl)
	}
	// The selected (last) token is highlighted instead.
	if seq := strings.Split(m.styles.Selected.Render("X"), "X")[0]; seq == "" || !strings.Contains(heat, seq+".") {
		t.Error("the selected token is not highlighted")
	}
	h.key("h")
	if heatOn(m) {
		t.Fatal("h did not turn the heatmap off")
	}
}
