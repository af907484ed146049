package panels

import (
	"fmt"
	"strings"

	"vkchat/runtime/engine"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// TitleBar is the top row: the model, its file and context, the backend,
// and the chat's state (busy ones highlighted).
func TitleBar(st theme.Styles, info engine.ModelInfo, name, state string, busy bool, w int) string {
	parts := []string{}
	if a := termtext.Sanitize(info.Arch); a != "" {
		parts = append(parts, a)
	}
	if info.Params > 0 {
		parts = append(parts, Count(info.Params))
	}
	if f := termtext.Sanitize(info.FileType); f != "" {
		parts = append(parts, f)
	}
	desc := strings.Join(parts, " ")
	mode := termtext.Sanitize(info.TemplateName)
	if info.Completion {
		mode = "completion"
	}
	dev := strings.TrimSpace(termtext.Sanitize(info.Backend) + " " + termtext.Sanitize(info.Device))
	if why := termtext.Sanitize(info.BackendReason); why != "" {
		dev += " (" + why + ")"
	}
	var meta []string
	for _, s := range []string{desc, contextLabel(info), mode, dev} {
		if s != "" {
			meta = append(meta, s)
		}
	}
	left := st.TitleName.Render(" vkchat ") + st.TitleBar.Render("│ ") + st.TitleName.Render(name)
	if len(meta) > 0 {
		left += st.TitleState.Render(" · " + strings.Join(meta, " · "))
	}
	stateStyle := st.TitleState
	if busy {
		stateStyle = st.Busy
	}
	right := stateStyle.Render("● "+state) + st.TitleBar.Render(" ")
	room := w - termtext.Width(right)
	left = termtext.Truncate(left, max(room-1, 0))
	pad := max(w-termtext.Width(left)-termtext.Width(right), 0)
	return left + st.TitleBar.Render(strings.Repeat(" ", pad)) + right
}

// contextLabel is the context window for the title bar, with the model's
// trained context when they differ ("ctx 2048 of 256 trained").
func contextLabel(info engine.ModelInfo) string {
	switch {
	case info.ContextSize <= 0:
		return ""
	case info.TrainContext <= 0 || info.TrainContext == info.ContextSize:
		return fmt.Sprintf("ctx %d", info.ContextSize)
	}
	return fmt.Sprintf("ctx %d of %d trained", info.ContextSize, info.TrainContext)
}

// Separator divides the transcript from the input and carries the status
// message, or the scroll position when scrolled up. A message too long
// for the line wraps under it, up to maxRows rows (the last cut with
// "…"), so a warning is read whole rather than cut at the width.
func Separator(st theme.Styles, text string, isErr, following bool, w, maxRows int) []string {
	style := st.StatusInfo
	if isErr {
		style = st.StatusError
	}
	if text == "" && !following {
		text = "scrolled up · pgdn to follow"
	}
	if text == "" {
		return []string{st.Separator.Render(strings.Repeat("─", w))}
	}
	const lead, leadW = "── ", 3
	text = termtext.Sanitize(strings.ReplaceAll(text, "\n", " "))
	width, maxRows := max(w-leadW-1, 1), max(maxRows, 1)
	rows := termtext.WrapWords(termtext.Glyphs(text, func(int) int { return 0 }), width)
	joined := func(rs [][]termtext.Glyph) string {
		var sb strings.Builder
		for i, r := range rs {
			if i > 0 {
				sb.WriteByte(' ')
			}
			for _, g := range r {
				sb.WriteString(g.Text)
			}
		}
		return sb.String()
	}
	var out []string
	for i := 0; i < len(rows) && i < maxRows; i++ {
		row := joined(rows[i : i+1])
		if i == maxRows-1 {
			// The last row there is room for: what does not fit ends in "…".
			row = termtext.Truncate(joined(rows[i:]), width)
		}
		if i == 0 {
			line := st.Separator.Render(lead) + style.Render(row) + " "
			out = append(out, line+st.Separator.Render(strings.Repeat("─", max(w-termtext.Width(line), 0))))
		} else {
			out = append(out, strings.Repeat(" ", leadW)+style.Render(row))
		}
	}
	return out
}

// TemplateLabel names how the model reads the conversation, for a status
// line: "completion mode" or "template NAME".
func TemplateLabel(info engine.ModelInfo) string {
	if info.Completion {
		return "completion mode"
	}
	return "template " + termtext.Sanitize(info.TemplateName)
}
