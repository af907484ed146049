package picker

import "github.com/charmbracelet/bubbles/key"

// KeyMap is the picker's key bindings.
type KeyMap struct {
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Home     key.Binding
	End      key.Binding

	Choose      key.Binding // list: chat with the selected model
	Download    key.Binding // empty store: download the offered model
	PullDefault key.Binding // list: download the default model anyway
	Stop        key.Binding // downloading: stop and leave
	Retry       key.Binding // failed download: try again
	Demo        key.Binding // chat with the bundled demo model (Options.Demo)
	Exit        key.Binding // failed download: leave (help only; any key does)
	Quit        key.Binding // leave without a model
	ForceQuit   key.Binding // leave from any screen
	Help        key.Binding // toggle the full help
}

// DefaultKeyMap returns the picker's bindings; the list moves like the
// bubbles list and less (arrows, j/k, g/G).
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "b"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "f", " "), key.WithHelp("pgdn", "page down")),
		Home:     key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "first")),
		End:      key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last")),

		Choose:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "chat")),
		Download:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "download")),
		PullDefault: key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "download default")),
		Stop:        key.NewBinding(key.WithKeys("esc", "q"), key.WithHelp("esc", "stop")),
		Retry:       key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "retry")),
		Demo:        key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "demo model")),
		// Any key but r leaves the error screen; these are the ones a
		// user reaches for, listed so the help has something to show.
		Exit:      key.NewBinding(key.WithKeys("enter", "esc", "q"), key.WithHelp("any other key", "exit")),
		Quit:      key.NewBinding(key.WithKeys("q", "esc"), key.WithHelp("q", "quit")),
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "more")),
	}
}

// bindings is one screen's keys, in help.KeyMap form.
type bindings struct {
	short []key.Binding
	full  [][]key.Binding
}

func (b bindings) ShortHelp() []key.Binding { return b.short }

func (b bindings) FullHelp() [][]key.Binding {
	if b.full == nil {
		return [][]key.Binding{b.short}
	}
	return b.full
}
