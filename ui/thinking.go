package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"

	"vkchat/runtime/chat"
	"vkchat/runtime/engine"
	"vkchat/ui/termtext"
)

// thinkBlock is the reasoning of a thinking model's reply (Qwen3,
// DeepSeek-R1, SmolLM3), as the engine marked it. The turn's content then
// holds only the answer; raw keeps the reply as the model wrote it, tags
// included, which is what the conversation sends back so the template
// decides what earlier reasoning the model sees.
type thinkBlock struct {
	raw    string
	text   string        // the reasoning, tags left out
	tokens int           // tokens of the block, tags included; 0 for a loaded turn
	dur    time.Duration // their decode time
	open   bool          // the model is still reasoning
}

// thinkSettings are the chat's thinking switches.
type thinkSettings struct {
	expanded bool // reasoning blocks shown in full rather than folded
	off      bool // /think off: enable_thinking=false
}

// thinkingKey folds and unfolds every reasoning block.
var thinkingKey = key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "show/fold thinking"))

// appendThinking is appendToken for a reply that has reasoning: the piece
// goes to raw, its answer part to content, its reasoning to the block.
func (t *turn) appendThinking(info engine.TokenInfo) {
	if t.think == nil {
		// Anything before the block was blank (the engine only opens one
		// at the start of a reply): it belongs to neither part.
		t.think = &thinkBlock{raw: t.content}
		t.content = ""
	}
	b := t.think
	b.raw += info.Piece
	if info.Thinking {
		b.tokens++
		b.dur += info.Duration
		b.text += info.Thought
	}
	b.open = info.Thinking && info.Answer == ""
	start := len(t.content)
	t.content += info.Answer
	t.addStep(info, start)
}

// modelText is the turn as the model sees it in the conversation.
func (t *turn) modelText() string {
	if t.think != nil {
		return t.think.raw
	}
	return t.content
}

// splitLoaded gives a loaded assistant turn its reasoning block when the
// saved text has one; a reply whose prompt opened the block starts without
// "<think>" but still closes it.
func (t *turn) splitLoaded() {
	if t.role != chat.RoleAssistant {
		return
	}
	c, o := strings.Index(t.content, chat.ThinkClose), strings.Index(t.content, chat.ThinkOpen)
	if c < 0 {
		return
	}
	thought, answer := chat.SplitThinking(t.content, o < 0 || o > c)
	if thought == "" && answer == t.content {
		return
	}
	t.think = &thinkBlock{raw: t.content, text: thought}
	t.content = answer
}

// thinkingLines draws a turn's reasoning block: one dimmed row while
// folded, the reasoning itself under it when expanded.
func (m *Model) thinkingLines(t *turn, width int) []string {
	b := t.think
	if b == nil {
		return nil
	}
	st := m.styles
	var facts []string
	if b.tokens > 0 {
		facts = append(facts, fmt.Sprintf("%d %s", b.tokens, plural(b.tokens, "token", "tokens")))
	}
	if b.dur > 0 {
		facts = append(facts, fmt.Sprintf("%.1f s", b.dur.Seconds()))
	}
	head := "thought"
	if b.open && t.streaming {
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
	for _, para := range strings.Split(strings.Trim(termtext.Sanitize(b.text), "\n"), "\n") {
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
