package inspector

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/command"
	"vkchat/ui/conversation"
)

// KeyMap is the inspector's keys: tab enters it, the rest work while the
// transcript has focus.
type KeyMap struct {
	Inspect                key.Binding
	PrevToken, NextToken   key.Binding
	FirstToken, LastToken  key.Binding
	Heatmap, HeatBasis     key.Binding
	Experts                key.Binding
	Lens                   key.Binding
	CandUp, CandDown       key.Binding
	Fork                   key.Binding
	PrevBranch, NextBranch key.Binding
	LineUp, LineDown       key.Binding
	Back                   key.Binding
}

// DefaultKeyMap documents the second half of each pair by its first.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	quiet := func(keys ...string) key.Binding { return key.NewBinding(key.WithKeys(keys...)) }
	return KeyMap{
		Inspect:    b([]string{"tab"}, "tab", "inspect"),
		PrevToken:  b([]string{"left"}, "←/→", "token"),
		NextToken:  quiet("right"),
		FirstToken: b([]string{"home"}, "home/end", "first/last"),
		LastToken:  quiet("end"),
		Heatmap:    b([]string{"h"}, "h", "heatmap"),
		HeatBasis:  b([]string{"s"}, "s", "heat by surprisal/prob"),
		Experts:    b([]string{"e"}, "e", "expert map (MoE)"),
		Lens:       b([]string{"l"}, "l", "logit lens (layers)"),
		CandUp:     b([]string{"up"}, "↑/↓", "candidate"),
		CandDown:   quiet("down"),
		Fork:       b([]string{"enter"}, "enter", "fork with it"),
		PrevBranch: b([]string{"["}, "[/]", "branch"),
		NextBranch: quiet("]"),
		LineUp:     b([]string{"ctrl+up"}, "ctrl+↑/↓", "scroll"),
		LineDown:   quiet("ctrl+down"),
		Back:       b([]string{"tab", "esc"}, "tab/esc", "back"),
	}
}

// Section is the inspector's part of the key reference (F1, the README).
// ctrl+↑/↓ is listed with the chat's keys.
func (k KeyMap) Section() command.KeySection {
	return command.KeySection{Title: "Inspector (tab)", Keys: []key.Binding{
		k.Inspect, k.PrevToken, k.FirstToken, k.CandUp, k.Fork, k.PrevBranch,
		k.Heatmap, k.HeatBasis, k.Experts, k.Lens, k.Back,
	}}
}

// Footer is the first footer row while inspecting, with the chat's help,
// quit and stop keys; moe adds the expert map of a mixture-of-experts model.
func (k KeyMap) Footer(moe bool, help, quit, stop key.Binding) []key.Binding {
	if moe {
		return []key.Binding{k.PrevToken, k.CandUp, k.Fork, k.PrevBranch, k.Heatmap, k.HeatBasis, k.Experts, k.Back, help, quit, k.FirstToken, k.LineUp, stop}
	}
	return []key.Binding{k.PrevToken, k.CandUp, k.Fork, k.PrevBranch, k.Heatmap, k.HeatBasis, k.Back, help, quit, k.FirstToken, k.LineUp, stop}
}

// Host is what the inspector's keys do to the chat around it.
type Host interface {
	command.Reporter
	Replies() []*conversation.Turn
	Reveal()         // scroll the transcript to the cursor
	Enter() bool     // inspect the latest reply's last token
	Leave()          // back to the input
	Type(tea.KeyMsg) // leave and type the key into the input
	TokenText(int32) string
	Fork(t *conversation.Turn, k int, token int32) tea.Cmd
	SwitchBranch(dir int)
	Scroll(rows int)
	Redraw() // the transcript's colours changed
	MoE() bool
	// LensStamp names what a position's lens depends on besides its
	// tokens (the conversation's revision, the model, the backend): when
	// it changes the computed lenses are dropped.
	LensStamp() string
	// Lens starts computing the lens of step k of t (the distribution that
	// step was drawn from) off the UI goroutine; the command delivers a
	// LensMsg. An error says why it cannot start now.
	Lens(t *conversation.Turn, k int, stamp string) (tea.Cmd, error)
}

// Key handles a key while the transcript has focus. With the lens view
// on, whatever the key moved to has its lens asked for.
func (in *Inspector) Key(msg tea.KeyMsg, k KeyMap, h Host) tea.Cmd {
	cmd := in.key(msg, k, h)
	if cmd == nil && in.lens.on {
		cmd = in.lensCmd(h)
	}
	return cmd
}

func (in *Inspector) key(msg tea.KeyMsg, k KeyMap, h Host) tea.Cmd {
	show := func(t *conversation.Turn, step int) {
		if in.Show(t, step, true) {
			h.Reveal()
		}
	}
	switch {
	case key.Matches(msg, k.Back):
		h.Leave()
	case key.Matches(msg, k.PrevToken), key.Matches(msg, k.NextToken):
		delta := -1
		if key.Matches(msg, k.NextToken) {
			delta = +1
		}
		// Crossing into the neighbouring replies at either end.
		t, step, ok := in.Next(delta, h.Replies())
		if !ok {
			h.Enter()
			break
		}
		show(t, step)
	case key.Matches(msg, k.FirstToken):
		if t := in.Turn(); t != nil {
			show(t, 0)
		}
	case key.Matches(msg, k.LastToken):
		if t := in.Turn(); t != nil {
			show(t, len(t.Steps)-1)
		}
	case key.Matches(msg, k.CandUp), key.Matches(msg, k.CandDown):
		delta := -1
		if key.Matches(msg, k.CandDown) {
			delta = +1
		}
		if s := in.MoveCandidate(delta, h.TokenText); s != "" {
			h.Info(s)
		}
	case key.Matches(msg, k.Fork):
		t, step, token, ok, err := in.ForkChoice()
		if err != nil {
			h.Error(err.Error())
			return nil
		}
		if ok {
			return h.Fork(t, step, token)
		}
	case key.Matches(msg, k.PrevBranch):
		h.SwitchBranch(-1)
	case key.Matches(msg, k.NextBranch):
		h.SwitchBranch(+1)
	case key.Matches(msg, k.HeatBasis):
		status := in.ToggleHeatBasis()
		h.Redraw()
		h.Info(status)
	case key.Matches(msg, k.Heatmap):
		h.Info(in.ToggleHeat())
	case key.Matches(msg, k.Experts):
		h.Info(in.ToggleExperts(h.MoE()))
	case key.Matches(msg, k.Lens):
		h.Info(in.toggleLens())
	case key.Matches(msg, k.LineUp):
		h.Scroll(-1)
	case key.Matches(msg, k.LineDown):
		h.Scroll(+1)
	case msg.Type == tea.KeyRunes || msg.Type == tea.KeySpace:
		// Typing goes back to the input, so a stray inspector session never
		// swallows a message.
		h.Type(msg)
	}
	return nil
}
