package helppane

import (
	"fmt"
	"strings"

	"vkchat/runtime/engine"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
	"vkchat/ui/transcript"
)

// Prompt is what /prompt shows: the rendered prompt, or why it could
// not be rendered (in the pane, wrapped: template errors are long).
type Prompt struct {
	R   engine.RenderedPrompt
	Err string
	// placeholder: the conversation had no user turn to answer, so one
	// was added (the text given to /prompt, else chat.NextPlaceholder).
	Placeholder bool
}

// promptLines draws the rendered prompt: its text as the model reads it,
// then every token, template markup in [brackets] and text quoted.
func (p *Prompt) lines(st theme.Styles, c Content, w int) []string {
	w = max(w, 1)
	if p.Err != "" {
		lines := transcript.PlainRows("The prompt of the next reply could not be rendered", st.PanelTitle, w)
		lines = append(lines, transcript.PlainRows("esc closes", st.Hint, w)...)
		return append(append(lines, ""), transcript.PlainRows(p.Err, st.StatusError, w)...)
	}
	r := &p.R
	tmpl := r.Template
	if tmpl == "" {
		tmpl = "none (completion mode)"
	}
	head := fmt.Sprintf("Prompt of the next reply · template %s · %d tokens · enable_thinking=%v", tmpl, len(r.Tokens), !c.ThinkingOff)
	if c.Effort != "" {
		head += " · reasoning_effort=" + c.Effort
	}
	lines := transcript.PlainRows(head, st.PanelTitle, w)
	if r.FoldsSystem {
		lines = append(lines, transcript.PlainRows("the template refuses or drops the system role: the system prompt is folded into the first user turn", st.Meta, w)...)
	}
	if r.TemplateNote != "" {
		lines = append(lines, transcript.PlainRows(termtext.Sanitize(r.TemplateNote), st.Notice, w)...)
	}
	if p.Placeholder {
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
