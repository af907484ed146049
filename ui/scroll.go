package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/termtext"
)

// scrollState is the transcript's scroll position, kept by a
// bubbles/viewport; follow keeps it pinned to the bottom while a reply
// streams in, until the user scrolls up.
type scrollState struct {
	vp     viewport.Model
	follow bool
}

// wheelStep is how many rows a notch of the mouse wheel scrolls.
const wheelStep = 3

// syncTranscript gives the viewport the transcript at the current layout
// and applies following and revealing the inspected token; it returns the
// row of the selected token (-1 when none).
func (m *Model) syncTranscript(l layout) int {
	lines, sel := m.transcriptLines(l.mainW)
	vp := &m.scroll.vp
	vp.Width, vp.Height = l.mainW, l.transcriptH
	vp.SetContent(strings.Join(lines, "\n"))
	if m.scroll.follow {
		vp.GotoBottom()
	}
	if m.revealSelection && sel >= 0 {
		switch {
		case sel < vp.YOffset:
			vp.SetYOffset(sel)
			m.scroll.follow = false
		case sel >= vp.YOffset+vp.Height:
			vp.SetYOffset(sel - vp.Height + 1)
			m.scroll.follow = false
		}
		m.revealSelection = false
	}
	// SetContent keeps an offset past the new end when the content
	// shrank by less than a screen; SetYOffset clamps it.
	vp.SetYOffset(vp.YOffset)
	return sel
}

// transcriptView is the visible window of the transcript.
func (m *Model) transcriptView(l layout) []string {
	m.syncTranscript(l)
	return termtext.FitLines(strings.Split(m.scroll.vp.View(), "\n"), l.mainW, l.transcriptH)
}

// page scrolls the help screen when it is open, else the transcript, by a
// screenful less one row so the reader keeps their place.
func (m *Model) page(dir int) {
	step := max(m.layout().transcriptH-1, 1)
	if m.showHelp {
		m.helpOffset = max(m.helpOffset+dir*step, 0)
		return
	}
	m.scrollBy(dir * step)
}

// scrollBy moves the transcript n rows (up when negative); reaching the
// bottom follows new text again.
func (m *Model) scrollBy(n int) {
	l := m.layout()
	if l.tiny {
		return
	}
	m.syncTranscript(l)
	vp := &m.scroll.vp
	if n < 0 {
		vp.ScrollUp(-n)
	} else {
		vp.ScrollDown(n)
	}
	m.scroll.follow = vp.AtBottom()
}

// handleMouse scrolls the transcript (or the help screen) with the wheel,
// for terminals and programs that have mouse reporting on.
func (m *Model) handleMouse(msg tea.MouseMsg) {
	if msg.Action != tea.MouseActionPress {
		return
	}
	switch msg.Button {
	case tea.MouseButtonWheelUp:
		m.wheel(-wheelStep)
	case tea.MouseButtonWheelDown:
		m.wheel(+wheelStep)
	}
}

func (m *Model) wheel(n int) {
	if m.showHelp {
		m.helpOffset = max(m.helpOffset+n, 0)
		return
	}
	m.scrollBy(n)
}
