package ui

import (
	"github.com/charmbracelet/bubbles/key"
)

// thinkingKey folds and unfolds every reasoning block.
var thinkingKey = key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "show/fold thinking"))

// toggleThinking folds or unfolds every reasoning block.
func (m *Model) toggleThinking() {
	if m.tr.ToggleThinking() {
		m.setStatus("thinking shown")
	} else {
		m.setStatus("thinking folded")
	}
}
