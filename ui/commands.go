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
		{Name: "think", ArgHelp: "on|off|low|medium|high", Arg: command.TextRequired,
			Help: "enable_thinking for thinking models (Qwen3, SmolLM3, Gemma 4): off asks for the answer without reasoning; low, medium, high set gpt-oss's reasoning_effort",
			Run:  func(a command.Args) tea.Cmd { m.setThinking(a.Text); return nil }},
		{Name: "prompt", ArgHelp: "[TEXT]", Arg: command.Text,
			Help: "show the exact prompt of the next reply and its tokens; TEXT stands for your next message",
			Run:  func(a command.Args) tea.Cmd { m.showPrompt(a.Text); return nil }},
	})
}
