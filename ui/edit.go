package ui

import (
	"fmt"
	"strconv"
	"strings"

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

// startEdit is /edit [N]: the Nth message you wrote (the last one without
// N) goes into the input to be changed and sent again.
func (m *Model) startEdit(arg string) {
	if m.info.Completion {
		m.setError("completion mode has no messages to edit: the text is one document")
		return
	}
	var users []*conversation.Turn
	for _, t := range m.conv.Turns() {
		if t.Role == chat.RoleUser {
			users = append(users, t)
		}
	}
	if len(users) == 0 {
		m.setError("no message to edit yet")
		return
	}
	n := len(users)
	if arg = strings.TrimSpace(arg); arg != "" {
		v, err := strconv.Atoi(arg)
		if err != nil || v < 1 || v > len(users) {
			m.setError(fmt.Sprintf("/edit N: N is a message of yours, 1 to %d (the last one without N)", len(users)))
			return
		}
		n = v
	}
	m.edit = &editing{turn: users[n-1], n: n}
	m.input.SetValue(users[n-1].Content)
	m.setStatus(fmt.Sprintf("editing your message %d of %d: enter sends it as a new branch (the old one stays: alt+, / alt+.) · esc cancels", n, len(users)))
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
