package transcript

import (
	"fmt"
	"strings"

	"vkchat/ui/conversation"
	"vkchat/ui/termtext"
)

// thinkingLines draws a turn's reasoning block: one dimmed row while
// folded, the reasoning itself under it when expanded.
func (tr *Transcript) thinkingLines(t *conversation.Turn, width int) []string {
	b := t.Think
	if b == nil {
		return nil
	}
	st := tr.styles
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
	arrow, hint := "▸ ", tr.opts.ThinkingKey+" to show"
	if tr.expanded {
		arrow, hint = "▾ ", tr.opts.ThinkingKey+" to fold"
	}
	row := arrow + head
	if len(facts) > 0 {
		row += " · " + strings.Join(facts, " · ")
	}
	row += " · " + hint
	lines := []string{bodyIndent + st.Meta.Render(termtext.Truncate(row, max(width-len(bodyIndent), 1)))}
	if !tr.expanded {
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

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
