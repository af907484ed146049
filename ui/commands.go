package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/command"
)

// commands builds the registry the input line is parsed against.
func (m *Model) commands() *command.Registry {
	return command.New(m.smp.Commands(), []command.Command{
		{Name: "system", ArgHelp: "[TEXT]", Arg: command.Text,
			Help: "set the system prompt; without TEXT clear it",
			Run:  func(a command.Args) tea.Cmd { m.setSystem(a.Text); return nil }},
		{Name: "clear", Aliases: []string{"new"}, Help: "start a new chat (the old one stays saved)",
			Run: func(command.Args) tea.Cmd { m.newChat(); return nil }},
		{Name: "save", ArgHelp: "[NAME]", Arg: command.Text,
			Help: "save the conversation now, or a copy to NAME: Markdown if it ends in .md, else JSON; a bare name goes with the saved chats, a path (./x, ~/x) where it says",
			Run:  func(a command.Args) tea.Cmd { m.saveCommand(a.Text); return nil }},
		{Name: "load", ArgHelp: "NAME", Arg: command.TextRequired,
			Help: "resume a saved conversation: a name /chats lists (the same rule as /save), or a path",
			Run:  func(a command.Args) tea.Cmd { m.loadCommand(a.Text); return nil }},
		{Name: "chats", Aliases: []string{"history"}, Help: "list the saved conversations, newest first, with the /load NAME that opens each",
			Run: func(command.Args) tea.Cmd { m.showChats(); return nil }},
		{Name: "export", ArgHelp: "FILE", Arg: command.TextRequired,
			Help: "write the inspected (else the latest) reply's tokens, log-probabilities and top alternatives as JSON Lines; vkchat replay FILE re-runs it",
			Run:  func(a command.Args) tea.Cmd { m.exportReply(a.Text); return nil }},
		{Name: "model", ArgHelp: "[FILE]", Arg: command.Text,
			Help: "switch to another model, keeping the conversation (its template renders it from the next reply); without FILE pick from the stored models",
			Run:  func(a command.Args) tea.Cmd { return m.switchModel(a.Text) }},
		{Name: "edit", ArgHelp: "[N]", Arg: command.Text,
			Help: "edit your last message (or your Nth) and send it again as a new branch; the old one stays (alt+, / alt+.); esc cancels",
			Run: func(a command.Args) tea.Cmd {
				if m.generating() {
					m.setError("a reply is still being written: Esc stops it, then /edit")
					return nil
				}
				m.startEdit(a.Text)
				return nil
			}},
		{Name: "copy", ArgHelp: "[code [N]|all]", Arg: command.Text,
			Help: "copy the last reply; code: its last code block (code N: the Nth); all: the whole chat as Markdown (OSC 52, and the system clipboard)",
			Run:  func(a command.Args) tea.Cmd { m.copyCommand(a.Text); return nil }},
	}, m.pane.Commands(), []command.Command{
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
