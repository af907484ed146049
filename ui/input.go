package ui

import tea "github.com/charmbracelet/bubbletea"

// The editor is ui/input's; these tie it to the chat: a resumed
// conversation seeds its history, and an edit it refused becomes the
// status line.

// inputKey gives a key to the editor and shows an edit it refused.
func (m *Model) inputKey(msg tea.KeyMsg) tea.Cmd {
	if msg.Type == tea.KeyUp && !m.input.HasHistory() {
		m.input.SeedHistory(m.conv.UserMessages())
	}
	cmd := m.input.Update(msg)
	m.showInputError()
	return cmd
}

// receiveInput passes the editor a message the chat does not handle.
func (m *Model) receiveInput(msg tea.Msg) tea.Cmd {
	cmd := m.input.Receive(msg)
	m.showInputError()
	return cmd
}

func (m *Model) showInputError() {
	if err := m.input.TakeError(); err != nil {
		m.setError(err.Error())
	}
}
