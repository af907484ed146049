package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
)

// thinkSettings are the chat's thinking switches; whether reasoning
// blocks are folded is the transcript's.
type thinkSettings struct {
	off bool // /think off: enable_thinking=false
}

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

// setThinking is /think on|off: enable_thinking for the next replies.
func (m *Model) setThinking(arg string) {
	if m.info.Completion {
		m.setError("completion mode has no chat template to pass enable_thinking to")
		return
	}
	switch strings.ToLower(strings.TrimSpace(arg)) {
	case "on":
		m.think.off = false
		m.setStatus("thinking on: enable_thinking=true from the next reply")
	case "off":
		m.think.off = true
		m.setStatus("thinking off: enable_thinking=false from the next reply")
	default:
		m.setError(fmt.Sprintf("/think takes on or off, not %q", arg))
	}
}
