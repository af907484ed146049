package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"

	"vkchat/ui/conversation"
	"vkchat/ui/termtext"
)

// thinkSettings are the chat's thinking switches.
type thinkSettings struct {
	expanded bool // reasoning blocks shown in full rather than folded
	off      bool // /think off: enable_thinking=false
}

// thinkingKey folds and unfolds every reasoning block.
var thinkingKey = key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "show/fold thinking"))

// thinkingLines draws a turn's reasoning block: one dimmed row while
// folded, the reasoning itself under it when expanded.
func (m *Model) thinkingLines(t *conversation.Turn, width int) []string {
	b := t.Think
	if b == nil {
		return nil
	}
	st := m.styles
	var facts []string
	if b.Tokens > 0 {
		facts = append(facts, fmt.Sprintf("%d %s", b.Tokens, plural(b.Tokens, "token", "tokens")))
	}
	if b.Dur > 0 {
		facts = append(facts, fmt.Sprintf("%.1f s", b.Dur.Seconds()))
	}
	head := "thought"
	if b.Open && t.Streaming {
		head = "thinking…"
	}
	arrow, hint := "▸ ", thinkingKey.Help().Key+" to show"
	if m.think.expanded {
		arrow, hint = "▾ ", thinkingKey.Help().Key+" to fold"
	}
	row := arrow + head
	if len(facts) > 0 {
		row += " · " + strings.Join(facts, " · ")
	}
	row += " · " + hint
	lines := []string{bodyIndent + st.Meta.Render(termtext.Truncate(row, max(width-len(bodyIndent), 1)))}
	if !m.think.expanded {
		return lines
	}
	gutter := "│ "
	textW := max(width-len(bodyIndent)-len(gutter), 1)
	for _, para := range strings.Split(strings.Trim(termtext.Sanitize(b.Text), "\n"), "\n") {
		gs := termtext.Glyphs(para, func(int) int { return 0 })
		rows := termtext.WrapWords(gs, textW)
		if len(rows) == 0 {
			rows = append(rows, nil)
		}
		for _, r := range rows {
			var sb strings.Builder
			for _, g := range r {
				sb.WriteString(g.Text)
			}
			lines = append(lines, bodyIndent+st.Meta.Render(gutter+sb.String()))
		}
	}
	return lines
}

// toggleThinking folds or unfolds every reasoning block.
func (m *Model) toggleThinking() {
	m.think.expanded = !m.think.expanded
	m.invalidate()
	if m.think.expanded {
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
