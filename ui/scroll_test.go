package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/transcript"
)

// streamingHarness streams a reply much taller than an 80x24 screen and
// stops it after hold tokens.
func streamingHarness(t *testing.T, hold int) (*harness, *fakeEngine) {
	t.Helper()
	eng := newFakeEngine()
	eng.replies = [][]string{longMarkdownReply()}
	for _, p := range eng.replies[0] {
		eng.id(p)
	}
	eng.holdAfter = hold
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(80, 24)
	h.typeText("tell me")
	h.key("enter")
	h.waitFor("the hold point", func() bool {
		r := m.conv.Last()
		return r != nil && r.Role == "assistant" && len(r.Steps) == hold
	})
	return h, eng
}

func TestTranscriptFollowsTheStreamUntilScrolledUp(t *testing.T) {
	h, eng := streamingHarness(t, 300)
	m := h.m
	m.View()
	vp := &m.tr
	if !m.tr.Following() || !vp.AtBottom() || vp.YOffset() == 0 {
		t.Fatalf("not following a long reply: offset %d of %d rows", vp.YOffset(), vp.TotalLineCount())
	}

	h.key("pgup")
	m.View()
	top, rows := vp.YOffset(), vp.TotalLineCount()
	if m.tr.Following() || !strings.Contains(m.View(), "scrolled up · pgdn to follow") {
		t.Fatal("pgup did not stop following")
	}
	close(eng.release)
	h.idle()
	m.View()
	if vp.TotalLineCount() <= rows || vp.YOffset() != top {
		t.Fatalf("the view moved while scrolled up: offset %d -> %d, rows %d -> %d", top, vp.YOffset(), rows, vp.TotalLineCount())
	}

	for !m.tr.Following() {
		h.key("pgdown")
	}
	m.View()
	if !vp.AtBottom() {
		t.Error("pgdown to the end does not show the end")
	}
}

func TestMouseWheelScrollsTheTranscript(t *testing.T) {
	h, eng := streamingHarness(t, 300)
	close(eng.release)
	h.idle()
	m := h.m
	m.View()
	bottom := m.tr.YOffset()
	wheel := func(b tea.MouseButton) {
		h.send(tea.MouseMsg{Button: b, Action: tea.MouseActionPress, X: 5, Y: 5})
		m.View()
	}
	wheel(tea.MouseButtonWheelUp)
	if m.tr.YOffset() != bottom-transcript.WheelStep || m.tr.Following() {
		t.Fatalf("wheel up: offset %d (bottom %d), follow %v", m.tr.YOffset(), bottom, m.tr.Following())
	}
	if m.input.Value() != "" {
		t.Errorf("the wheel reached the editor: %q", m.input.Value())
	}
	wheel(tea.MouseButtonWheelDown)
	if m.tr.YOffset() != bottom || !m.tr.Following() {
		t.Fatalf("wheel down: offset %d (bottom %d), follow %v", m.tr.YOffset(), bottom, m.tr.Following())
	}
	// A release or a motion is not a notch.
	h.send(tea.MouseMsg{Button: tea.MouseButtonWheelUp, Action: tea.MouseActionRelease})
	if m.tr.YOffset() != bottom {
		t.Error("a wheel release scrolled")
	}
}

// The inspector scrolls to the token it shows; leaving it goes back to the
// live view at the bottom, where the reply is Markdown again.
func TestLeavingTheInspectorFollowsAgain(t *testing.T) {
	h, eng := streamingHarness(t, 300)
	close(eng.release)
	h.idle()
	m := h.m
	h.key("tab", "home")
	m.View()
	if m.tr.Following() || m.tr.AtBottom() {
		t.Fatal("the first token of a long reply did not scroll the transcript up")
	}
	h.key("tab")
	m.View()
	if !m.tr.Following() || !m.tr.AtBottom() {
		t.Errorf("after leaving the inspector: offset %d, follow %v", m.tr.YOffset(), m.tr.Following())
	}
}
