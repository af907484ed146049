package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"

	"vkchat/runtime/chat"
)

// thinkSettings are the chat's thinking switches; whether reasoning
// blocks are folded is the transcript's.
type thinkSettings struct {
	off    bool   // /think off: enable_thinking=false
	effort string // /think low|medium|high: reasoning_effort (gpt-oss); "" unset
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

// setThinking is /think on|off|low|medium|high: enable_thinking, and for
// templates that read it (gpt-oss's harmony) reasoning_effort, for the next
// replies. An effort turns thinking on; off leaves the effort as it was,
// since enable_thinking=false already asks for no reasoning.
func (m *Model) setThinking(arg string) {
	if m.info.Completion {
		m.setError("completion mode has no chat template to pass enable_thinking to")
		return
	}
	a := strings.ToLower(strings.TrimSpace(arg))
	switch a {
	case "on":
		m.think.off = false
		m.setStatus("thinking on: enable_thinking=true from the next reply")
	case "off":
		m.think.off = true
		m.setStatus("thinking off: enable_thinking=false from the next reply")
	default:
		if chat.CheckReasoningEffort(a) != nil || a == "" {
			m.setError(fmt.Sprintf("/think takes on, off, or an effort (%s), not %q", strings.Join(chat.ReasoningEfforts, ", "), arg))
			return
		}
		m.think.off, m.think.effort = false, a
		m.setStatus(fmt.Sprintf("thinking on, reasoning_effort=%s from the next reply (templates that read it: gpt-oss)", a))
	}
}
