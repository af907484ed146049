package ui

import "github.com/charmbracelet/bubbles/key"

// KeyMap declares every key the chat answers to, once; the help footer is
// drawn from the same bindings so it cannot drift from what the keys do.
type KeyMap struct {
	Send       key.Binding
	Newline    key.Binding
	Stop       key.Binding
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

	// BranchPrev and BranchNext switch branches while typing too,
	// for conversations loaded from a file (no tokens to inspect).
	BranchPrev key.Binding
	BranchNext key.Binding
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

		BranchPrev: b([]string{"alt+,"}, "alt+,/.", "branch"),
		BranchNext: quiet("alt+."),
	}
}

// inputHelp is the first footer row while typing.
func (k KeyMap) inputHelp(inspect key.Binding) []key.Binding {
	return []key.Binding{k.Send, k.Newline, k.Stop, inspect, k.Help, k.Quit, k.Regenerate, k.NewChat, k.PageUp}
}
