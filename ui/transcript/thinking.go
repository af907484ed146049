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
	lines, _ := tr.thinkingLinesSel(t, width, -1)
	return lines
}

// thinkingLinesSel is thinkingLines with step sel of t selected by the
// inspector: when that step is part of the reasoning, the block is drawn
// open (folded or not) with the step's text highlighted, and selRow is the
// row it starts on (-1 otherwise).
func (tr *Transcript) thinkingLinesSel(t *conversation.Turn, width, sel int) (lines []string, selRow int) {
	b := t.Think
	selRow = -1
	if b == nil {
		return nil, -1
	}
	spanStart, spanEnd, selected := t.ThoughtSpan(sel)
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
	lines = []string{bodyIndent + st.Meta.Render(termtext.Truncate(row, max(width-len(bodyIndent), 1)))}
	if !tr.expanded && !selected {
		return lines, -1
	}
	gutter := "│ "
	textW := max(width-len(bodyIndent)-len(gutter), 1)
	san, src := termtext.SanitizeMap(b.Text)
	off := len(san) - len(strings.TrimLeft(san, "\n"))
	for _, para := range strings.Split(strings.Trim(san, "\n"), "\n") {
		base := off
		gs := termtext.Glyphs(para, func(o int) int {
			if i := base + o; selected && i < len(src) && src[i] >= spanStart && src[i] < spanEnd {
				return 1
			}
			return 0
		})
		off += len(para) + 1
		rows := termtext.WrapWords(gs, textW)
		if len(rows) == 0 {
			rows = append(rows, nil)
		}
		for _, r := range rows {
			var sb, run strings.Builder
			tag := 0
			flush := func() {
				if tag == 1 {
					sb.WriteString(st.Selected.Render(run.String()))
				} else {
					sb.WriteString(st.Meta.Render(run.String()))
				}
				run.Reset()
			}
			for _, g := range r {
				if g.Tag != tag {
					flush()
					tag = g.Tag
				}
				if g.Tag == 1 && selRow < 0 {
					selRow = len(lines)
				}
				run.WriteString(g.Text)
			}
			flush()
			lines = append(lines, bodyIndent+st.Meta.Render(gutter)+sb.String())
		}
	}
	return lines, selRow
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
