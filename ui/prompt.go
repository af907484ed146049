package ui

import (
	"vkchat/runtime/chat"
	"vkchat/runtime/engine"
	"vkchat/ui/helppane"
	"vkchat/ui/termtext"
)

// PromptRenderer is implemented by engines that can show the exact prompt
// a request renders to (the /prompt command); *engine.Session does.
type PromptRenderer interface {
	RenderPrompt(req engine.Request) (engine.RenderedPrompt, error)
}

// nextRequest is the request the next reply is generated from.
func (m *Model) nextRequest() engine.Request {
	return engine.Request{Messages: m.conv.Messages(false), MaxTokens: m.smp.MaxTokens, DisableThinking: m.think.off, ReasoningEffort: m.think.effort, Stop: m.smp.Stops}
}

// showPrompt is /prompt [TEXT]: the prompt of the next reply and its
// tokens, in the help pane (esc closes it). The next reply answers a user
// turn; in a fresh chat or after a reply there is none yet, so TEXT (or a
// placeholder) stands for it, as chat.ForNextReply says.
func (m *Model) showPrompt(next string) {
	pr, ok := m.eng.(PromptRenderer)
	if !ok {
		m.setError("this engine cannot show its prompt")
		return
	}
	req := m.nextRequest()
	pane := &helppane.Prompt{}
	if !m.info.Completion {
		req.Messages, pane.Placeholder = chat.ForNextReply(req.Messages, next)
	} else if next != "" {
		req.Messages = append(req.Messages, chat.Message{Role: chat.RoleUser, Content: next})
	}
	r, err := pr.RenderPrompt(req)
	if err != nil {
		pane.Err = termtext.Sanitize(err.Error())
		m.setError("the prompt could not be rendered (the pane says why)")
	}
	pane.R = r
	m.pane.ShowPrompt(pane)
}
