package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/command"
)

// commands builds the registry the input line is parsed against.
func (m *Model) commands() *command.Registry {
	changes, edits := m.saver.Commands()
	return command.New(m.smp.Commands(), changes, []command.Command{
		{Name: "model", ArgHelp: "[FILE]", Arg: command.Text,
			Help: "switch to another model, keeping the conversation (its template renders it from the next reply); without FILE pick from the stored models",
			Run:  func(a command.Args) tea.Cmd { return m.switchModel(a.Text) }},
	}, edits, m.pane.Commands(), []command.Command{
		{Name: "quit", Aliases: []string{"exit"}, Help: "save and quit",
			Run: func(command.Args) tea.Cmd { return m.quit() }},
		{Name: "backend", ArgHelp: "NAME", Arg: command.TextRequired,
			Help: "continue on another compute backend (cpu or vulkan), e.g. after a GPU fault",
			Run:  func(a command.Args) tea.Cmd { m.switchBackend(a.Text); return nil }},
	}, m.think.Commands())
}
