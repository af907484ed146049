package ui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/termtext"
)

// onTerminal is the model bubbletea runs: the chat, whose rows are encoded
// by termtext.TerminalRow so that a terminal that draws some text wider or
// narrower than the layout measured cannot move a panel border or push
// the screen. The chat's own View stays plain text (the goldens); only
// what goes to a real terminal carries the cursor moves.
type onTerminal struct{ *Model }

func (t onTerminal) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := t.Model.Update(msg)
	return t, cmd
}

func (t onTerminal) View() string {
	view := t.Model.View()
	if view == "" {
		return ""
	}
	rows := strings.Split(view, "\n")
	f := t.frame
	for i, r := range rows {
		var cols []int
		if f.split > 0 && i >= f.first && i < f.last {
			cols = []int{f.split}
		}
		rows[i] = termtext.TerminalRow(r, cols)
	}
	return strings.Join(rows, "\n")
}

// frame is where the last View put the side column: rows [first, last)
// hold the main column and, from column split, the side panels.
type frame struct {
	first, last, split int
}
