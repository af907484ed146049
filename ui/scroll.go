package ui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/conversation"
	"vkchat/ui/transcript"
)

// The transcript (ui/transcript) draws the conversation and keeps its
// scroll position; here it is handed what it draws with that the root
// owns, and the keys and the wheel are routed to it or to the help
// screen.

// syncTranscript hands the transcript the inspector's cursor and heatmap,
// the reply being generated and the model's name: they are the root's,
// and change between draws. Its size comes from layout.
func (m *Model) syncTranscript() {
	heat, bySurprisal := m.insp.Heat()
	m.tr.SetCursor(transcript.Cursor{Inspecting: m.focus == focusTranscript, Turn: m.insp.Turn(), Step: m.insp.Step(),
		Heat: heat, BySurprisal: bySurprisal})
	var reply *conversation.Turn
	id := 0
	if g := m.gen; g != nil {
		reply, id = g.reply, g.id
	}
	m.tr.SetReply(reply, id)
	m.tr.SetModel(m.modelName(), m.info.Completion)
}

// transcriptView is the visible window of the transcript at the layout
// View just computed.
func (m *Model) transcriptView() []string {
	m.syncTranscript()
	return strings.Split(m.tr.View(), "\n")
}

// scheduleRedraw draws the streaming reply now and asks for a redraw if
// its open Markdown block is held back (see transcript.ScheduleRedraw).
func (m *Model) scheduleRedraw() tea.Cmd {
	m.syncTranscript()
	return m.tr.ScheduleRedraw()
}

// page scrolls the help screen when it is open, else the transcript, by a
// screenful less one row so the reader keeps their place.
func (m *Model) page(dir int) {
	step := max(m.layout().transcriptH-1, 1)
	if m.pane.Shown {
		m.pane.Scroll(dir * step)
		return
	}
	m.scrollBy(dir * step)
}

// scrollBy moves the transcript n rows (up when negative); reaching the
// bottom follows new text again.
func (m *Model) scrollBy(n int) {
	m.layout()
	m.syncTranscript()
	m.tr.ScrollBy(n)
}

// handleMouse scrolls the help screen with the wheel while it is open,
// else hands the event to the transcript; for terminals and programs that
// have mouse reporting on.
func (m *Model) handleMouse(msg tea.MouseMsg) {
	if m.pane.Shown {
		m.pane.Wheel(msg)
		return
	}
	m.layout()
	m.syncTranscript()
	m.tr.Update(msg)
}
