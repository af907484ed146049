package ui

import (
	"fmt"
	"math"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/sample"
	"vkchat/ui/command"
	"vkchat/ui/panels"
)

// commands builds the registry the input line is parsed against.
func (m *Model) commands() *command.Registry {
	param := func(setting string, set func(*sample.Params, command.Args)) func(command.Args) tea.Cmd {
		return func(a command.Args) tea.Cmd {
			p := m.params
			set(&p, a)
			m.changed = setting
			return m.changeParams(p)
		}
	}
	return command.New([]command.Command{
		{Name: "temp", Aliases: []string{"temperature"}, ArgHelp: "VALUE", Arg: command.Float, Lo: 0, Hi: sample.MaxTemperature, Example: "/temp 0.7",
			Help: "sampling temperature; 0 is greedy",
			Run:  param(panels.SetTemperature, func(p *sample.Params, a command.Args) { p.Temperature = a.Value })},
		{Name: "top-p", Aliases: []string{"topp", "top_p"}, ArgHelp: "VALUE", Arg: command.Float, Lo: sample.MinTopP, Hi: 1, Example: "/top-p 0.9",
			Help: "keep the likeliest tokens up to this total probability; 1 is off",
			Run:  param(panels.SetTopP, func(p *sample.Params, a command.Args) { p.TopP = a.Value })},
		{Name: "top-k", Aliases: []string{"topk", "top_k"}, ArgHelp: "N", Arg: command.Int, Lo: 0, Hi: math.MaxInt32, Example: "/top-k 40",
			Help: "keep the N likeliest tokens; 0 is off",
			Run:  param(panels.SetTopK, func(p *sample.Params, a command.Args) { p.TopK = a.N })},
		{Name: "min-p", Aliases: []string{"minp", "min_p"}, ArgHelp: "VALUE", Arg: command.Float, Lo: 0, Hi: 1, Example: "/min-p 0.05",
			Help: "drop tokens less likely than VALUE × the likeliest; 0 is off",
			Run:  param(panels.SetMinP, func(p *sample.Params, a command.Args) { p.MinP = a.Value })},
		{Name: "repeat", Aliases: []string{"repeat-penalty"}, ArgHelp: "VALUE", Arg: command.Float, Lo: sample.MinRepeat, Hi: sample.MaxRepeat, Example: "/repeat 1.1",
			Help: "penalty for recently used tokens; 1 is off",
			Run:  param(panels.SetRepeat, func(p *sample.Params, a command.Args) { p.RepeatPenalty = a.Value })},
		{Name: "presence", Aliases: []string{"presence-penalty", "presence_penalty"}, ArgHelp: "VALUE", Arg: command.Float, Lo: -sample.MaxPenalty, Hi: sample.MaxPenalty, Example: "/presence 0.5",
			Help: "subtract VALUE once from every token already in the last 64; 0 is off",
			Run:  param(panels.SetPresence, func(p *sample.Params, a command.Args) { p.PresencePenalty = a.Value })},
		{Name: "frequency", Aliases: []string{"frequency-penalty", "frequency_penalty"}, ArgHelp: "VALUE", Arg: command.Float, Lo: -sample.MaxPenalty, Hi: sample.MaxPenalty, Example: "/frequency 0.5",
			Help: "subtract VALUE per use from tokens in the last 64; 0 is off",
			Run:  param(panels.SetFrequency, func(p *sample.Params, a command.Args) { p.FrequencyPenalty = a.Value })},
		{Name: "max-tokens", Aliases: []string{"max_tokens", "n"}, ArgHelp: "N", Arg: command.Int, Lo: 0, Hi: math.MaxInt32, Example: "/max-tokens 256",
			Help: "end each reply after N tokens; 0: until the model stops",
			Run: func(a command.Args) tea.Cmd {
				m.cfg.MaxTokens = a.N
				if a.N == 0 {
					m.setStatus("replies run until the model stops")
				} else {
					m.setStatus(fmt.Sprintf("replies end after %d tokens", a.N))
				}
				return nil
			}},
		{Name: "stop", ArgHelp: "[TEXT]", Arg: command.Text,
			Help: "end replies where the answer writes TEXT (\\n for a line break; add more one at a time); without TEXT clear them",
			Run:  func(a command.Args) tea.Cmd { m.setStop(a.Text); return nil }},
		{Name: "seed", ArgHelp: "[N]", Arg: command.Seed,
			Help: "fix the sampler seed; without N draw a new one",
			Run: func(a command.Args) tea.Cmd {
				if a.RandomSeed {
					return m.drawSeed()
				}
				return param(panels.SetSeed, func(p *sample.Params, a command.Args) { p.Seed = a.Seed })(a)
			}},
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
		{Name: "help", Aliases: []string{"?"}, Help: "show keys and commands",
			Run: func(command.Args) tea.Cmd { m.showHelp, m.helpOffset = true, 0; return nil }},
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
