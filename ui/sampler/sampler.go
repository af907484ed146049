package sampler

import (
	"fmt"
	"math"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/sample"
	"vkchat/ui/command"
	"vkchat/ui/panels"
)

// Engine is what the settings need of the engine.
type Engine interface {
	SetParams(sample.Params)
	Preview(sample.Params) (sample.Result, bool)
}

// Sampler holds the settings the next replies are generated with.
type Sampler struct {
	Params    sample.Params
	Changed   string   // the setting changed last, highlighted in the panels
	MaxTokens int      // /max-tokens: 0 runs until the model stops
	Stops     []string // /stop: strings that end a reply
	Keys      KeyMap

	eng        Engine
	status     command.Reporter
	newSeed    func() uint64
	previewSeq int
}

// New starts from the engine's settings; newSeed draws a seed for /seed
// and alt+s.
func New(eng Engine, p sample.Params, maxTokens int, status command.Reporter, newSeed func() uint64) *Sampler {
	return &Sampler{Params: p, MaxTokens: maxTokens, Keys: DefaultKeyMap(), eng: eng, status: status, newSeed: newSeed}
}

// SetEngine moves the settings to another engine (/model): they carry over.
func (s *Sampler) SetEngine(eng Engine) {
	s.eng = eng
	eng.SetParams(s.Params)
}

// Set hands p to the engine as it is (a loaded chat's settings).
func (s *Sampler) Set(p sample.Params) {
	s.Params = p
	s.eng.SetParams(p)
}

// PreviewMsg is the result of re-ranking the last distribution under new
// settings; seq drops answers overtaken by a later change.
type PreviewMsg struct {
	seq int
	Res sample.Result
	OK  bool
}

// Change hands new settings to the engine and asks it, off the update
// loop, to re-rank the last distribution under them: the engine may be
// busy with a decode step, and the UI must not wait for it.
func (s *Sampler) Change(p sample.Params) tea.Cmd {
	// The commands parse within these ranges; Check is the one rule the
	// sampler, the flags and the files share, so nothing else slips in.
	if err := p.Check(); err != nil {
		s.status.Error(err.Error())
		return nil
	}
	s.Set(p)
	if s.Changed != "" {
		s.status.Info(s.Changed + " " + panels.SettingValue(p, s.Changed))
	}
	s.previewSeq++
	seq, eng := s.previewSeq, s.eng
	return func() tea.Msg {
		res, ok := eng.Preview(p)
		return PreviewMsg{seq: seq, Res: res, OK: ok}
	}
}

// Current reports whether msg answers the latest change.
func (s *Sampler) Current(msg PreviewMsg) bool { return msg.seq == s.previewSeq }

// DrawSeed is alt+s and /seed without N.
func (s *Sampler) DrawSeed() tea.Cmd {
	p := s.Params
	p.Seed = s.newSeed()
	s.Changed = panels.SetSeed
	return s.Change(p)
}

// set is the handler of a command that sets one parameter.
func (s *Sampler) set(setting string, f func(*sample.Params, command.Args)) func(command.Args) tea.Cmd {
	return func(a command.Args) tea.Cmd {
		p := s.Params
		f(&p, a)
		s.Changed = setting
		return s.Change(p)
	}
}

// Commands are the settings' slash commands, in the order /help lists them.
func (s *Sampler) Commands() []command.Command {
	return []command.Command{
		{Name: "temp", Aliases: []string{"temperature"}, ArgHelp: "VALUE", Arg: command.Float, Lo: 0, Hi: sample.MaxTemperature, Example: "/temp 0.7",
			Help: "sampling temperature; 0 is greedy",
			Run:  s.set(panels.SetTemperature, func(p *sample.Params, a command.Args) { p.Temperature = a.Value })},
		{Name: "top-p", Aliases: []string{"topp", "top_p"}, ArgHelp: "VALUE", Arg: command.Float, Lo: sample.MinTopP, Hi: 1, Example: "/top-p 0.9",
			Help: "keep the likeliest tokens up to this total probability; 1 is off",
			Run:  s.set(panels.SetTopP, func(p *sample.Params, a command.Args) { p.TopP = a.Value })},
		{Name: "top-k", Aliases: []string{"topk", "top_k"}, ArgHelp: "N", Arg: command.Int, Lo: 0, Hi: math.MaxInt32, Example: "/top-k 40",
			Help: "keep the N likeliest tokens; 0 is off",
			Run:  s.set(panels.SetTopK, func(p *sample.Params, a command.Args) { p.TopK = a.N })},
		{Name: "min-p", Aliases: []string{"minp", "min_p"}, ArgHelp: "VALUE", Arg: command.Float, Lo: 0, Hi: 1, Example: "/min-p 0.05",
			Help: "drop tokens less likely than VALUE × the likeliest; 0 is off",
			Run:  s.set(panels.SetMinP, func(p *sample.Params, a command.Args) { p.MinP = a.Value })},
		{Name: "repeat", Aliases: []string{"repeat-penalty"}, ArgHelp: "VALUE", Arg: command.Float, Lo: sample.MinRepeat, Hi: sample.MaxRepeat, Example: "/repeat 1.1",
			Help: "penalty for recently used tokens; 1 is off",
			Run:  s.set(panels.SetRepeat, func(p *sample.Params, a command.Args) { p.RepeatPenalty = a.Value })},
		{Name: "presence", Aliases: []string{"presence-penalty", "presence_penalty"}, ArgHelp: "VALUE", Arg: command.Float, Lo: -sample.MaxPenalty, Hi: sample.MaxPenalty, Example: "/presence 0.5",
			Help: "subtract VALUE once from every token already in the last 64; 0 is off",
			Run:  s.set(panels.SetPresence, func(p *sample.Params, a command.Args) { p.PresencePenalty = a.Value })},
		{Name: "frequency", Aliases: []string{"frequency-penalty", "frequency_penalty"}, ArgHelp: "VALUE", Arg: command.Float, Lo: -sample.MaxPenalty, Hi: sample.MaxPenalty, Example: "/frequency 0.5",
			Help: "subtract VALUE per use from tokens in the last 64; 0 is off",
			Run:  s.set(panels.SetFrequency, func(p *sample.Params, a command.Args) { p.FrequencyPenalty = a.Value })},
		{Name: "max-tokens", Aliases: []string{"max_tokens", "n"}, ArgHelp: "N", Arg: command.Int, Lo: 0, Hi: math.MaxInt32, Example: "/max-tokens 256",
			Help: "end each reply after N tokens; 0: until the model stops",
			Run:  s.setMaxTokens},
		{Name: "stop", ArgHelp: "[TEXT]", Arg: command.Text,
			Help: "end replies where the answer writes TEXT (\\n for a line break; add more one at a time); without TEXT clear them",
			Run:  s.setStop},
		{Name: "seed", ArgHelp: "[N]", Arg: command.Seed,
			Help: "fix the sampler seed; without N draw a new one",
			Run: func(a command.Args) tea.Cmd {
				if a.RandomSeed {
					return s.DrawSeed()
				}
				return s.set(panels.SetSeed, func(p *sample.Params, a command.Args) { p.Seed = a.Seed })(a)
			}},
	}
}

// setMaxTokens is /max-tokens N.
func (s *Sampler) setMaxTokens(a command.Args) tea.Cmd {
	s.MaxTokens = a.N
	if a.N == 0 {
		s.status.Info("replies run until the model stops")
	} else {
		s.status.Info(fmt.Sprintf("replies end after %d tokens", a.N))
	}
	return nil
}
