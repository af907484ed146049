package transcript

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"vkchat/ui/conversation"
	"vkchat/ui/panels"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// turnRender caches a turn's rendered rows: finished turns are only wrapped
// again when the width or the highlighting changes, so a long conversation
// costs nothing per streamed token.
type turnRender struct {
	key     renderKey
	valid   bool
	lines   []string
	selLine int // row of the selected token, -1 when none
}

// turnCache is what the transcript keeps per turn: its rows and, for a
// reply drawn as Markdown, its rendered blocks.
type turnCache struct {
	render turnRender
	md     markdownCache
}

// cacheOf is t's cache, after dropping every cached row if the tree
// changed since they were drawn (a branch label reads "2/3" now).
func (tr *Transcript) cacheOf(t *conversation.Turn) *turnCache {
	if rev := tr.conv.Rev(); rev != tr.renderRev {
		tr.Invalidate()
		tr.renderRev = rev
	}
	c := tr.renders[t]
	if c == nil {
		c = &turnCache{}
		tr.renders[t] = c
	}
	return c
}

type renderKey struct {
	width, content, notes, steps    int
	streaming, done, heat, markdown bool
	bySurprisal, branch             bool
	sel                             int
}

// textClass is how a run of glyphs is styled.
type textClass int

const (
	classUser textClass = iota
	classAssistant
	classCode
	classFence
	classSelected
	classSpecAccepted // a speculative draft the target kept
	classSpecCorrected
	classSpecBonus
	classHeat // classHeat+level for each heatmap level
)

// segment is one turn's text as part of a rendered body.
type segment struct {
	t    *conversation.Turn
	base textClass
}

// bodyRender wraps the text of segs into rows of width cells. Code fences
// start and end code blocks, which keep their spacing, wrap hard and get a
// gutter; prose wraps at spaces. sel (a segment's turn and step) is drawn
// highlighted, and heat colours every generated token by its probability.
type bodyRender struct {
	st    theme.Styles
	width int
	heat  bool
	// bySurprisal colours the heatmap by surprisal instead of probability.
	bySurprisal bool
	sel         *conversation.Turn
	step        int
}

func (b bodyRender) style(c textClass) lipgloss.Style {
	switch c {
	case classUser:
		return b.st.UserText
	case classCode:
		return b.st.Code
	case classFence:
		return b.st.CodeFence
	case classSelected:
		return b.st.Selected
	case classAssistant:
		return b.st.AssistantText
	case classSpecAccepted:
		return b.st.SpecAccepted
	case classSpecCorrected:
		return b.st.SpecCorrected
	case classSpecBonus:
		return b.st.SpecBonus
	}
	if lvl := int(c - classHeat); lvl >= 0 && lvl < theme.HeatLevels {
		return b.st.Heat[lvl]
	}
	return b.st.AssistantText
}

func isFence(line string) bool {
	l := strings.TrimLeft(line, " ")
	return strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~")
}

const bodyIndent = "  "

// markdownMode says whether replies are drawn as Markdown now: not while
// the inspector or the heatmap needs each token's place on screen.
func (tr *Transcript) markdownMode() bool {
	return tr.md != nil && !tr.cursor.Inspecting && !tr.cursor.Heat
}

// renderTurn draws one chat turn: a label, notes, the text, a blank row.
func (tr *Transcript) renderTurn(t *conversation.Turn, width int) turnRender {
	sel := -1
	if tr.cursor.Inspecting && tr.cursor.Turn == t {
		sel = tr.cursor.Step
	}
	markdown := t.Role == "assistant" && tr.markdownMode()
	tooLong := markdown && len(t.Content) > maxMarkdownBytes
	markdown = markdown && !tooLong
	heat, bySurprisal := tr.cursor.Heat, tr.cursor.BySurprisal
	key := renderKey{width: width, content: len(t.Content), notes: len(t.Notes), steps: len(t.Steps),
		streaming: t.Streaming, done: t.Done != nil, heat: heat, markdown: markdown, sel: sel,
		bySurprisal: bySurprisal, branch: t.Tree.Branch() != nil}
	c := tr.cacheOf(t)
	if c.render.valid && c.render.key == key {
		return c.render
	}
	st := tr.styles
	var lines []string
	lines = append(lines, termtext.Truncate(tr.turnLabel(t), width))
	for _, n := range t.Notes {
		if n.Top {
			lines = append(lines, tr.noteLines(n, width)...)
		}
	}
	selLine := -1
	think, thinkSel := tr.thinkingLinesSel(t, width, sel)
	if thinkSel >= 0 {
		selLine = len(lines) + thinkSel
	}
	lines = append(lines, think...)
	if tooLong {
		lines = append(lines, termtext.Truncate(bodyIndent+st.Meta.Render(fmt.Sprintf("plain text: over %d KiB is not drawn as Markdown", maxMarkdownBytes>>10)), width))
	}
	body := bodyRender{st: st, width: max(width-len(bodyIndent), 1), heat: heat, sel: tr.cursor.Turn, step: sel, bySurprisal: bySurprisal}
	var mdRows []string
	if markdown && t.Content != "" {
		mdRows, markdown = tr.markdownRows(t, width-len(bodyIndent))
	}
	switch {
	case t.Content == "" && t.Streaming:
		lines = append(lines, bodyIndent+st.Meta.Render("…"))
	case markdown:
		for _, r := range mdRows {
			lines = append(lines, bodyIndent+r)
		}
	default:
		base := classAssistant
		if t.Role == "user" {
			base = classUser
		}
		rows, sr := body.render([]segment{{t: t, base: base}})
		if sr >= 0 {
			selLine = len(lines) + sr
		}
		for _, r := range rows {
			lines = append(lines, bodyIndent+r)
		}
	}
	for _, n := range t.Notes {
		if !n.Top {
			lines = append(lines, tr.noteLines(n, width)...)
		}
	}
	lines = append(lines, "")
	c.render = turnRender{key: key, valid: true, lines: lines, selLine: selLine}
	return c.render
}

// turnLabel is "▌ You" or "▌ model · N tokens · speed".
func (tr *Transcript) turnLabel(t *conversation.Turn) string {
	st := tr.styles
	if t.Role == "user" {
		label := st.UserLabel.Render("▌ You")
		if b := branchLabel(t); b != "" { // an edited message (/edit)
			label += st.Meta.Render(" · " + b)
		}
		return label
	}
	label := st.AssistantLabel.Render("▌ " + tr.modelName)
	var meta []string
	switch {
	case t.Streaming:
		meta = append(meta, "generating…")
	case len(t.Steps) > 0:
		meta = append(meta, fmt.Sprintf("%d tokens", len(t.Steps)))
		if d := t.Done; d != nil && d.Decode > 0 && d.Generated > 1 {
			meta = append(meta, panels.Rate(float64(d.Generated-1)/d.Decode.Seconds()))
		}
	}
	if b := branchLabel(t); b != "" {
		meta = append([]string{b}, meta...)
	}
	if len(meta) > 0 {
		label += st.Meta.Render(" · " + strings.Join(meta, " · "))
	}
	return label
}

func (tr *Transcript) noteLines(n conversation.Note, width int) []string {
	st := tr.styles
	icon, style := "■ ", st.Meta
	switch n.Kind {
	case conversation.NoteInfo:
		if n.Top {
			// Where a branch was forked: its text starts with its own
			// glyph (⑂), not the stop glyph, which says how a reply ended.
			icon = ""
		}
	case conversation.NoteWarn:
		icon, style = "⚠ ", st.Notice
	case conversation.NoteError:
		icon, style = "✗ ", st.Error
	}
	gs := termtext.Glyphs(termtext.Sanitize(strings.ReplaceAll(n.Text, "\n", " ")), func(int) int { return 0 })
	var out []string
	for i, row := range termtext.WrapWords(gs, max(width-len(bodyIndent)-2, 1)) {
		var sb strings.Builder
		for _, g := range row {
			sb.WriteString(g.Text)
		}
		prefix := icon
		if i > 0 {
			prefix = strings.Repeat(" ", termtext.Width(icon))
		}
		out = append(out, bodyIndent+style.Render(prefix+sb.String()))
	}
	return out
}

// Lines renders the whole conversation at the transcript's width and
// returns the row of the selected token (-1 when nothing is selected).
func (tr *Transcript) Lines() ([]string, int) {
	width := tr.width
	if width < 1 {
		return nil, -1
	}
	if tr.completion {
		return tr.completionLines(width)
	}
	lines := tr.headerLines(width)
	selLine := -1
	for _, t := range tr.conv.Turns() {
		r := tr.renderTurn(t, width)
		if r.selLine >= 0 {
			selLine = len(lines) + r.selLine
		}
		lines = append(lines, r.lines...)
	}
	return lines, selLine
}

// headerLines is what comes before the turns: the system prompt, and the
// welcome text while there are none.
func (tr *Transcript) headerLines(width int) []string {
	var lines []string
	if tr.conv.System() != "" {
		lines = append(lines, PlainRows("system: "+tr.conv.System(), tr.styles.SystemText, width)...)
		lines = append(lines, "")
	}
	if tr.conv.Len() == 0 {
		lines = append(lines, tr.welcomeLines(width)...)
	}
	return lines
}

// completionLines draws the conversation as the one running text the model
// sees, typed parts in the user's colour.
func (tr *Transcript) completionLines(width int) ([]string, int) {
	turns := tr.conv.Turns()
	if len(turns) == 0 {
		return tr.welcomeLines(width), -1
	}
	segs := make([]segment, 0, len(turns))
	for _, t := range turns {
		base := classAssistant
		if t.Role == "user" {
			base = classUser
		}
		segs = append(segs, segment{t: t, base: base})
	}
	sel := -1
	if tr.cursor.Inspecting {
		sel = tr.cursor.Step
	}
	heat, bySurprisal := tr.cursor.Heat, tr.cursor.BySurprisal
	body := bodyRender{st: tr.styles, width: width, heat: heat, sel: tr.cursor.Turn, step: sel, bySurprisal: bySurprisal}
	lines, selLine := body.render(segs)
	if r := tr.reply; r != nil && r.Streaming && r.Content == "" {
		lines = append(lines, tr.styles.Meta.Render("…"))
	}
	// Notes of the latest exchange only: older ones belong to text that has
	// long been continued.
	for _, t := range turns[max(len(turns)-2, 0):] {
		if b := branchLabel(t); b != "" {
			// Completion mode has no turn labels to carry it. Alt+, and
			// alt+. work with the focus anywhere; [ and ] only in the
			// inspector (elsewhere they are typed).
			lines = append(lines, tr.noteLines(conversation.Note{Kind: conversation.NoteInfo, Text: b + " · alt+, / alt+. switch"}, width)...)
		}
		for _, n := range t.Notes {
			lines = append(lines, tr.noteLines(n, width)...)
		}
	}
	return lines, selLine
}

// PlainRows word-wraps text, sanitized, in one style.
func PlainRows(s string, style lipgloss.Style, width int) []string {
	var out []string
	for _, line := range strings.Split(termtext.Sanitize(s), "\n") {
		for _, row := range termtext.WrapWords(termtext.Glyphs(line, func(int) int { return 0 }), width) {
			var sb strings.Builder
			for _, g := range row {
				sb.WriteString(g.Text)
			}
			out = append(out, style.Render(sb.String()))
		}
	}
	return out
}

func (tr *Transcript) welcomeLines(width int) []string {
	hint := "Type a message and press Enter. Alt+Enter adds a line, /help lists commands, F1 the keys."
	if tr.completion {
		hint = "Completion mode: type the start of a text and press Enter; the model continues it. Enter on an empty line continues again."
	}
	out := PlainRows(hint, tr.styles.Hint, width)
	out = append(out, "")
	out = append(out, PlainRows("Conversations are saved in "+tr.opts.SavedIn, tr.styles.Hint, width)...)
	return out
}

// branchLabel is the label's note on a branch point: "branch 2/3".
func branchLabel(t *conversation.Turn) string {
	if k, n, ok := t.BranchPos(); ok {
		return fmt.Sprintf("⑂ branch %d/%d", k, n)
	}
	return ""
}
