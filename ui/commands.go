package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/command"
)

// commands builds the registry the input line is parsed against.
func (m *Model) commands() *command.Registry {
	changes, edits := m.saver.Commands()
	model, backend := m.sw.Commands()
	return command.New(m.smp.Commands(), changes, model, edits, m.pane.Commands(), []command.Command{
		{Name: "quit", Aliases: []string{"exit"}, Help: "save and quit",
			Run: func(command.Args) tea.Cmd { return m.quit() }},
	}, backend, m.think.Commands())
}
