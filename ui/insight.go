package ui

import (
	"time"

	"vkchat/ui/panels"
	"vkchat/ui/termtext"
)

// stripRows is how many rows the surprisal strip takes.
func (m *Model) stripRows(transcriptH int) int {
	return m.insp.StripRows(m.inspecting(), m.pane.Shown, transcriptH)
}

// stripLines renders the surprisal strip of the followed reply.
func (m *Model) stripLines(width int) []string {
	t := m.insp.StripTurn(m.inspecting(), m.conv.Replies())
	return panels.SurprisalLines(m.styles, m.insp.Surprisal(t, m.inspecting()), width)
}

// readingState is the title bar's "reading prompt" with its progress.
func (m *Model) readingState() string {
	s := "reading prompt"
	if p := m.run.Progress; p != nil {
		s += " " + panels.ProgressText(p.Done, p.Total, p.ETA())
	} else if d := m.prefillElapsed(); d >= time.Second/10 {
		s += " " + panels.Duration(d.Round(100*time.Millisecond))
	}
	return s
}

// waiting is how long the running reply has waited for its first token.
func (m *Model) waiting() time.Duration {
	if m.gen == nil || m.run.TTFT > 0 || m.run.Generated > 0 || m.gen.started.IsZero() {
		return 0
	}
	return m.now().Sub(m.gen.started)
}

// moe reports whether the model routes its tokens to experts.
func (m *Model) moe() bool { return m.info.Experts > 0 }

// expertView is what the main column shows of a mixture-of-experts model's
// routing, in at most a share of the transcript's h rows of width cells:
// the expert map while it is on in the inspector, else on narrow screens
// the router panel (wide ones have it in the side column). Dense models,
// and the help screen, get none.
func (m *Model) expertView(h, width int, wide bool) []string {
	if !m.moe() || m.pane.Shown {
		return nil
	}
	st := m.styles
	var render func(rows int) []string
	room := h / 3
	switch {
	case m.insp.Experts() && m.inspecting():
		t := m.insp.StripTurn(true, m.conv.Replies())
		u := m.insp.ExpertUsage(t, m.info.Experts)
		render = func(rows int) []string { return panels.ExpertHeatLines(st, u, width, rows) }
		room = h / 2
	case !wide && !m.hidePanels:
		// the narrow router panel: optional, as in the side column
		r := m.insp.RouterPanel(m.info.Experts)
		render = func(rows int) []string {
			head := st.Label.Render(termtext.Truncate("router · "+panels.RouterTitle(r), width))
			return append([]string{head}, panels.RouterLines(st, r, width, rows-1)...)
		}
	default:
		return nil
	}
	rows := min(len(render(h)), room, h-4)
	if rows < 2 {
		return nil
	}
	return render(rows)
}
