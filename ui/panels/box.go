package panels

import (
	"strings"

	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// Box frames body rows with a rounded border and a title in the top edge.
// The result has len(body)+2 rows, each exactly width cells; body rows are
// cut or padded to the inside width (width-4, one space either side).
func Box(st theme.Styles, title string, body []string, width int) []string {
	if width < 4 {
		return termtext.FitLines(body, max(width, 0), len(body))
	}
	inner := width - 2
	top := st.PanelBorder.Render("╭" + strings.Repeat("─", inner) + "╮")
	// "╭─ title ─╮" needs the dash, two spaces and at least one cell of title.
	if title != "" && inner >= 4 {
		t := " " + termtext.Truncate(title, inner-3) + " "
		fill := inner - 1 - termtext.Width(t)
		top = st.PanelBorder.Render("╭─") + st.PanelTitle.Render(t) + st.PanelBorder.Render(strings.Repeat("─", fill)+"╮")
	}
	rows := make([]string, 0, len(body)+2)
	rows = append(rows, top)
	side := st.PanelBorder.Render("│")
	for _, l := range body {
		rows = append(rows, side+" "+termtext.Fit(l, inner-2)+" "+side)
	}
	rows = append(rows, st.PanelBorder.Render("╰"+strings.Repeat("─", inner)+"╯"))
	return rows
}

// InnerWidth is the width body rows get inside a Box of width w.
func InnerWidth(w int) int { return max(w-4, 0) }

// row lays a label and a value out in two columns.
func row(st theme.Styles, label string, labelW int, value string) string {
	return st.Label.Render(termtext.Fit(label, labelW)) + " " + value
}

// flow places items on as few rows of width cells as it can, separated by
// gap, so a list of settings adapts to the panel width.
func flow(items []string, gap string, width int) []string {
	var rows []string
	cur := ""
	for _, it := range items {
		switch {
		case cur == "":
			cur = it
		case termtext.Width(cur)+termtext.Width(gap)+termtext.Width(it) <= width:
			cur += gap + it
		default:
			rows = append(rows, cur)
			cur = it
		}
	}
	if cur != "" {
		rows = append(rows, cur)
	}
	return rows
}
