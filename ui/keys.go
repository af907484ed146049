package ui

import "github.com/charmbracelet/bubbles/key"

// KeyMap declares every key the chat answers to, once; the help footer is
// drawn from the same bindings so it cannot drift from what the keys do.
type KeyMap struct {
	Send       key.Binding
	Newline    key.Binding
	Stop       key.Binding
	Inspect    key.Binding
	Regenerate key.Binding
	NewChat    key.Binding
	PageUp     key.Binding
	PageDown   key.Binding
	Help       key.Binding
	History    key.Binding
	Quit       key.Binding
	Thinking   key.Binding
	Panels     key.Binding
	Redraw     key.Binding

	PrevToken  key.Binding
	NextToken  key.Binding
	FirstToken key.Binding
	LastToken  key.Binding
	Heatmap    key.Binding
	HeatBasis  key.Binding
	Experts    key.Binding
	CandUp     key.Binding
	CandDown   key.Binding
	Fork       key.Binding
	PrevBranch key.Binding
	NextBranch key.Binding
	// BranchPrev and BranchNext switch branches while typing too,
	// for conversations loaded from a file (no tokens to inspect).
	BranchPrev key.Binding
	BranchNext key.Binding
	LineUp     key.Binding
	LineDown   key.Binding
	Back       key.Binding
}

// DefaultKeyMap is the chat's keys; the sampler's are ui/sampler's.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	// The second half of a pair is documented by its first.
	quiet := func(keys ...string) key.Binding { return key.NewBinding(key.WithKeys(keys...)) }
	return KeyMap{
		Send:       b([]string{"enter"}, "enter", "send"),
		Newline:    b([]string{"alt+enter", "ctrl+j"}, "alt+enter", "newline"),
		Stop:       b([]string{"esc"}, "esc", "stop"),
		Inspect:    b([]string{"tab"}, "tab", "inspect"),
		Regenerate: b([]string{"ctrl+r"}, "ctrl+r", "regenerate"),
		NewChat:    b([]string{"ctrl+n"}, "ctrl+n", "new chat"),
		PageUp:     b([]string{"pgup"}, "pgup/pgdn", "scroll"),
		PageDown:   quiet("pgdown"),
		Help:       b([]string{"f1"}, "f1", "help"),
		History:    b([]string{"up", "down"}, "↑/↓", "sent lines (first/last row)"), // help only: the editor takes ↑/↓
		Quit:       b([]string{"ctrl+c"}, "ctrl+c", "stop; again: quit"),
		Thinking:   thinkingKey,
		Panels:     b([]string{"f2"}, "f2", "show/hide the optional panels (sampler, router, funnel, latency)"),
		Redraw:     b([]string{"ctrl+l"}, "ctrl+l", "redraw the screen"),

		PrevToken:  b([]string{"left"}, "←/→", "token"),
		NextToken:  quiet("right"),
		FirstToken: b([]string{"home"}, "home/end", "first/last"),
		LastToken:  quiet("end"),
		Heatmap:    b([]string{"h"}, "h", "heatmap"),
		HeatBasis:  b([]string{"s"}, "s", "heat by surprisal/prob"),
		Experts:    b([]string{"e"}, "e", "expert map (MoE)"),
		CandUp:     b([]string{"up"}, "↑/↓", "candidate"),
		CandDown:   quiet("down"),
		Fork:       b([]string{"enter"}, "enter", "fork with it"),
		PrevBranch: b([]string{"["}, "[/]", "branch"),
		NextBranch: quiet("]"),
		BranchPrev: b([]string{"alt+,"}, "alt+,/.", "branch"),
		BranchNext: quiet("alt+."),
		LineUp:     b([]string{"ctrl+up"}, "ctrl+↑/↓", "scroll"),
		LineDown:   quiet("ctrl+down"),
		Back:       b([]string{"tab", "esc"}, "tab/esc", "back"),
	}
}

// inputHelp is the first footer row while typing.
func (k KeyMap) inputHelp() []key.Binding {
	return []key.Binding{k.Send, k.Newline, k.Stop, k.Inspect, k.Help, k.Quit, k.Regenerate, k.NewChat, k.PageUp}
}

// inspectHelp is the first footer row while inspecting tokens; moe adds
// the expert map of a mixture-of-experts model.
func (k KeyMap) inspectHelp(moe bool) []key.Binding {
	if moe {
		return []key.Binding{k.PrevToken, k.CandUp, k.Fork, k.PrevBranch, k.Heatmap, k.HeatBasis, k.Experts, k.Back, k.Help, k.Quit, k.FirstToken, k.LineUp, k.Stop}
	}
	return []key.Binding{k.PrevToken, k.CandUp, k.Fork, k.PrevBranch, k.Heatmap, k.HeatBasis, k.Back, k.Help, k.Quit, k.FirstToken, k.LineUp, k.Stop}
}
