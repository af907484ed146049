package ui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/chat"
	"vkchat/ui/conversation"
)

// editing is an earlier user message being edited (/edit): sending the
// edited text makes it a new branch at that message, the old message and
// everything after it kept as the other branch ([ and ] switch).
type editing struct {
	turn *conversation.Turn // the message edited
	n    int                // its number among the user's messages, from 1
}

// cancelEdit leaves the edit; the input is emptied.
func (m *Model) cancelEdit() {
	m.edit = nil
	m.input.Reset()
	m.setStatus("edit canceled")
}

// sendEdit sends text in place of the message being edited: a new branch
// from that position, then a reply to it.
func (m *Model) sendEdit(text string) tea.Cmd {
	e := m.edit
	m.edit = nil
	pos := -1
	for i, t := range m.conv.Turns() {
		if t == e.turn {
			pos = i
		}
	}
	if pos < 0 {
		// The chat changed under the edit (a branch switch, a load):
		// send it as a new message rather than lose it.
		m.conv.Append(&conversation.Turn{Role: chat.RoleUser, Content: text})
		m.setStatus("the edited message is no longer on screen: sent as a new message")
		return m.startGeneration()
	}
	if m.focus == focusTranscript {
		m.leaveInspector()
	}
	set := m.conv.OpenBranch(pos)
	t := &conversation.Turn{Role: chat.RoleUser, Content: text}
	m.conv.Append(t)
	m.conv.JoinBranch(set, t)
	m.tr.Invalidate()
	m.setStatus(fmt.Sprintf("message %d edited: a new branch; alt+, / alt+. switch to the old one", e.n))
	return m.startGeneration()
}
