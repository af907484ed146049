package ui

import (
	"vkchat/runtime/engine"
	"vkchat/ui/helppane"
	"vkchat/ui/prompt"
)

// nextRequest is the request the next reply is generated from.
func (m *Model) nextRequest() engine.Request {
	return engine.Request{Messages: m.conv.Messages(false), MaxTokens: m.smp.MaxTokens, DisableThinking: m.think.Off, ReasoningEffort: m.think.Effort, Stop: m.smp.Stops}
}

// promptHost is what /think and /prompt (ui/prompt) need of the chat.
type promptHost struct{ *Model }

func (h promptHost) Info(s string)           { h.setStatus(s) }
func (h promptHost) Error(s string)          { h.setError(s) }
func (h promptHost) Completion() bool        { return h.info.Completion }
func (h promptHost) Request() engine.Request { return h.nextRequest() }
func (h promptHost) Show(p *helppane.Prompt) { h.pane.ShowPrompt(p) }
func (h promptHost) Renderer() (prompt.Renderer, bool) {
	r, ok := h.eng.(prompt.Renderer)
	return r, ok
}
