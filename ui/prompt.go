package ui

import (
	"fmt"
	"strings"

	"vkchat/runtime/chat"
	"vkchat/runtime/engine"
	"vkchat/ui/termtext"
	"vkchat/ui/transcript"
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

// promptPane is what /prompt shows: the rendered prompt, or why it could
// not be rendered (in the pane, wrapped: template errors are long).
type promptPane struct {
	r   engine.RenderedPrompt
	err string
	// placeholder: the conversation had no user turn to answer, so one
	// was added (the text given to /prompt, else chat.NextPlaceholder).
	placeholder bool
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
	pane := &promptPane{}
	if !m.info.Completion {
		req.Messages, pane.placeholder = chat.ForNextReply(req.Messages, next)
	} else if next != "" {
		req.Messages = append(req.Messages, chat.Message{Role: chat.RoleUser, Content: next})
	}
	r, err := pr.RenderPrompt(req)
	if err != nil {
		pane.err = termtext.Sanitize(err.Error())
		m.setError("the prompt could not be rendered (the pane says why)")
	}
	pane.r = r
	m.prompt = pane
	m.showHelp, m.helpOffset = true, 0
}

// promptLines draws the rendered prompt: its text as the model reads it,
// then every token, template markup in [brackets] and text quoted.
func (m *Model) promptLines(w int) []string {
	st := m.styles
	w = max(w, 1)
	if m.prompt.err != "" {
		lines := transcript.PlainRows("The prompt of the next reply could not be rendered", st.PanelTitle, w)
		lines = append(lines, transcript.PlainRows("esc closes", st.Hint, w)...)
		return append(append(lines, ""), transcript.PlainRows(m.prompt.err, st.StatusError, w)...)
	}
	r := &m.prompt.r
	tmpl := r.Template
	if tmpl == "" {
		tmpl = "none (completion mode)"
	}
	head := fmt.Sprintf("Prompt of the next reply · template %s · %d tokens · enable_thinking=%v", tmpl, len(r.Tokens), !m.think.off)
	if m.think.effort != "" {
		head += " · reasoning_effort=" + m.think.effort
	}
	lines := transcript.PlainRows(head, st.PanelTitle, w)
	if r.FoldsSystem {
		lines = append(lines, transcript.PlainRows("the template refuses or drops the system role: the system prompt is folded into the first user turn", st.Meta, w)...)
	}
	if r.TemplateNote != "" {
		lines = append(lines, transcript.PlainRows(termtext.Sanitize(r.TemplateNote), st.Notice, w)...)
	}
	if m.prompt.placeholder {
		lines = append(lines, transcript.PlainRows("the last user turn stands for your next message (/prompt TEXT renders it with TEXT)", st.Meta, w)...)
	}
	if r.DroppedMessages > 0 {
		lines = append(lines, transcript.PlainRows(fmt.Sprintf("%d older messages left out to fit the context", r.DroppedMessages), st.Notice, w)...)
	}
	if r.OpensThinking {
		lines = append(lines, transcript.PlainRows("the prompt opens a <think> block: the reply starts with reasoning", st.Meta, w)...)
	}
	lines = append(lines, transcript.PlainRows("esc closes · pgup/pgdn scroll", st.Hint, w)...)
	lines = append(lines, "")
	for _, l := range strings.Split(termtext.Sanitize(r.Text), "\n") {
		gs := termtext.Glyphs(l, func(int) int { return 0 })
		rows := termtext.WrapHard(gs, w)
		if len(rows) == 0 {
			rows = append(rows, nil)
		}
		for _, row := range rows {
			var sb strings.Builder
			for _, g := range row {
				sb.WriteString(g.Text)
			}
			lines = append(lines, st.InputText.Render(sb.String()))
		}
	}
	lines = append(lines, "", st.PanelTitle.Render("tokens (template markup in [brackets])"))
	words := make([]string, len(r.Tokens))
	for i, t := range r.Tokens {
		if t.Special {
			// Visible: Gemma's newline token is special, and a raw "\n"
			// would break the list across rows.
			words[i] = fmt.Sprintf("%d[%s]", t.ID, termtext.Visible(t.Text))
		} else {
			words[i] = fmt.Sprintf("%d%q", t.ID, t.Piece)
		}
	}
	lines = append(lines, transcript.PlainRows(strings.Join(words, " "), st.Meta, w)...)
	return lines
}
